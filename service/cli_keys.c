/*
 * cli_keys.c - `dpoptd keys` (see cli_keys.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "cli_keys.h"
#include "keys.h"
#include "migrate.h"

static int
usage(void)
{
	fprintf(stderr, "usage: dpoptd keys create --tenant T --role owner|analyst\n"
			"       dpoptd keys list [--tenant T]\n"
			"       dpoptd keys revoke ID\n"
			"       dpoptd keys rotate ID [--grace SECONDS]\n");
	return 2;
}

static int
fail(const struct err *e)
{
	fprintf(stderr, "dpoptd keys: %s%s%s\n", e->msg, e->detail[0] != '\0' ? ": " : "",
		e->detail);
	return 1;
}

/* --name VALUE pairs from argv: the value of name, or NULL; false when an
 * argument is not one of names or lacks a value. */
static bool
options(int argc, char **argv, const char *const *names, const char **values)
{
	for (size_t k = 0; names[k] != NULL; k++)
		values[k] = NULL;
	if (argc % 2 != 0)
		return false;
	for (int i = 0; i < argc; i += 2) {
		size_t k = 0;

		while (names[k] != NULL && strcmp(argv[i], names[k]) != 0)
			k++;
		if (names[k] == NULL)
			return false;
		values[k] = argv[i + 1];
	}
	return true;
}

static const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "-";
}

/* Print the keys page by page; returns the exit status. */
static int
list(struct db_conn *db, const char *tenant)
{
	char cursor[17] = "";
	struct err e = { 0 };

	for (;;) {
		char *text = NULL;
		json_t *page, *item;
		const char *next;
		size_t i;

		if (keys_list(db, tenant, cursor[0] != '\0' ? cursor : NULL, 100, &text, &e) !=
		    ERR_OK)
			return fail(&e);
		page = json_loads(text, 0, NULL);
		free(text);
		if (page == NULL) {
			fprintf(stderr, "dpoptd keys: unreadable key list\n");
			return 1;
		}
		json_array_foreach (json_object_get(page, "items"), i, item) {
			printf("%s\t%s\t%s\t%s\t%s\t%s\n", str(item, "id"), str(item, "tenant"),
			       str(item, "role"), str(item, "state"), str(item, "created_at"),
			       str(item, "revoked_at"));
		}
		next = json_string_value(json_object_get(page, "next_cursor"));
		snprintf(cursor, sizeof(cursor), "%s", next != NULL ? next : "");
		json_decref(page);
		if (cursor[0] == '\0')
			return 0;
	}
}

int
cli_keys(const char *database_url, int argc, char **argv)
{
	static const char *const create_opts[] = { "--tenant", "--role", NULL };
	static const char *const list_opts[] = { "--tenant", NULL };
	static const char *const rotate_opts[] = { "--grace", NULL };
	const char *v[2];
	char key[AUTH_KEY_LEN + 1];
	struct audit_actor who;
	struct err e = { 0 };
	struct db_conn *db;
	long long grace = 0;
	int status = 0;

	if (argc < 1)
		return usage();
	if (strcmp(argv[0], "create") == 0) {
		if (!options(argc - 1, argv + 1, create_opts, v) || v[0] == NULL || v[1] == NULL)
			return usage();
	} else if (strcmp(argv[0], "list") == 0) {
		if (!options(argc - 1, argv + 1, list_opts, v))
			return usage();
	} else if (strcmp(argv[0], "revoke") == 0) {
		if (argc != 2)
			return usage();
	} else if (strcmp(argv[0], "rotate") == 0) {
		char *end = NULL;

		if (argc < 2 || !options(argc - 2, argv + 2, rotate_opts, v))
			return usage();
		if (v[0] != NULL) {
			grace = strtoll(v[0], &end, 10);
			if (v[0][0] == '\0' || *end != '\0' || grace < 0 ||
			    grace > KEYS_MAX_GRACE_SECONDS) {
				fprintf(stderr, "dpoptd keys: --grace must be 0 to %d seconds\n",
					KEYS_MAX_GRACE_SECONDS);
				return 2;
			}
		}
	} else {
		return usage();
	}

	db = db_connect(database_url, &e);
	if (db == NULL || migrate_apply(db, NULL, &e) != ERR_OK) {
		db_close(db);
		return fail(&e);
	}
	if (strcmp(argv[0], "create") == 0) {
		audit_actor_cli(v[0], &who);
		if (keys_create(db, &who, v[1], key, NULL, &e) == ERR_OK)
			printf("%s\n", key);
		else
			status = fail(&e);
	} else if (strcmp(argv[0], "list") == 0) {
		status = list(db, v[0]);
	} else if (strcmp(argv[0], "revoke") == 0) {
		audit_actor_cli("", &who); /* the tenant is the key's */
		if (keys_revoke(db, &who, NULL, argv[1], true, NULL, &e) == ERR_OK)
			printf("revoked %s\n", argv[1]);
		else
			status = fail(&e);
	} else {
		audit_actor_cli("", &who);
		if (keys_rotate(db, &who, argv[1], grace, key, NULL, &e) == ERR_OK)
			printf("%s\n", key);
		else
			status = fail(&e);
	}
	OPENSSL_cleanse(key, sizeof(key));
	db_close(db);
	return status;
}
