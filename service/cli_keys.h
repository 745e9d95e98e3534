/*
 * cli_keys.h - `dpoptd keys`: API keys from the command line, for the
 * operator (whoever can reach the database).
 *
 *	dpoptd keys create --tenant T --role owner|analyst
 *	                    print a new key once (the tenant is created if new)
 *	dpoptd keys list [--tenant T]
 *	                    one line per key: id, tenant, role, state
 *	                    (active, expiring, revoked), created_at, revoked_at
 *	dpoptd keys revoke ID
 *	                    revoke at once (every replica refuses it from now)
 *	dpoptd keys rotate ID [--grace SECONDS]
 *	                    print a new key of the same tenant and role; the old
 *	                    one is revoked after SECONDS (default 0: at once)
 *
 * Each change is audited with actor role "operator" (audit.h).  Unlike the
 * API, revoke does not refuse the tenant's last owner key: the operator
 * can always create another.
 */
#ifndef SERVICE_CLI_KEYS_H
#define SERVICE_CLI_KEYS_H

/* argv holds the arguments after "keys"; database_url is the service's.
 * Returns the exit status (0, 1 on an error, 2 on a usage error); output on
 * stdout, errors on stderr. */
int cli_keys(const char *database_url, int argc, char **argv);

#endif /* SERVICE_CLI_KEYS_H */
