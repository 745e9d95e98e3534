-- 0012_admit.sql: an admission's writes under the ledger's row lock in one
-- statement (issue 17).  Before, an admission held the lock across 7 to 8
-- round trips (lock, read, charge, run row, ledger entry, audit row,
-- NOTIFY and COMMIT); now a 'basic' admission holds it for one call of
-- dpopt_admit() and a 'renyi' one for two (dpopt_admit_filter() reads the
-- filter under the lock, the service checks the fit in C with the
-- filter's arithmetic, algorithms/privacy/filter.c, and dpopt_admit()
-- writes).  The lock order is service/ledger.h's: 1. the ledger's root
-- row, 2. the dataset's own row, 3. inserts into runs, ledger_entries
-- (and audit_log).  Neither function commits: a 'basic' admission is the
-- one statement of its transaction; a 'renyi' one sends "BEGIN; SELECT *
-- FROM dpopt_admit_lock(...)", then "SELECT * FROM dpopt_admit(...);
-- COMMIT".
--
-- dpopt_admit_lock: steps 1 and 2 of the lock order for an admission of a
-- run of tenant p_tenant on p_dataset, and the replay check of its
-- Idempotency-Key (p_idem, NULL: none) under that lock.  status:
-- 'not_found' (no such dataset of the tenant, or deleted), 'exists' (a run
-- with the key exists: its id and request hash), or 'locked' (the ledger
-- root's id, its mode, its budget delta and its filter as text).
CREATE FUNCTION dpopt_admit_lock(p_dataset uuid, p_tenant text, p_idem text)
RETURNS TABLE (status text, ledger_id uuid, mode text, state text, budget_delta text,
               filter_orders text, filter_caps text, spent_rdp text, run_id uuid,
               request_hash text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_ledger uuid;
    v_state text;
    v_run uuid;
    v_hash text;
BEGIN
    -- Step 1: the ledger's root row.  ledger_of never changes after
    -- creation, so resolving it without a lock cannot pick a stale root.
    SELECT l.id INTO v_ledger FROM datasets l
     WHERE l.id = (SELECT coalesce(d.ledger_of, d.id) FROM datasets d
                    WHERE d.id = p_dataset AND d.tenant_id = p_tenant)
       FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::text, NULL::text, NULL::text, NULL::uuid, NULL::text;
        RETURN;
    END IF;
    -- Step 2: the dataset's own row (a no-op when it is the root).
    SELECT d.state INTO v_state FROM datasets d WHERE d.id = p_dataset FOR NO KEY UPDATE;
    IF v_state = 'deleted' THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::text, NULL::text, NULL::text, NULL::uuid, NULL::text;
        RETURN;
    END IF;
    IF p_idem IS NOT NULL THEN
        SELECT r.id, encode(r.request_hash, 'hex') INTO v_run, v_hash FROM runs r
         WHERE r.tenant_id = p_tenant AND r.idempotency_key = p_idem;
        IF FOUND THEN
            RETURN QUERY SELECT 'exists'::text, NULL::uuid, NULL::text, NULL::text, NULL::text,
                                NULL::text, NULL::text, NULL::text, v_run, v_hash;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT 'locked'::text, l.id, l.accounting_mode, v_state, l.budget_delta::text,
                        l.filter_orders::text, l.filter_caps::text, l.spent_rdp::text,
                        NULL::uuid, NULL::text
                   FROM datasets l WHERE l.id = v_ledger;
END;
$$;

-- dpopt_admit: admit run p_run (an id the caller drew) of tenant p_tenant
-- on p_dataset, planned for accounting mode p_mode, with charge (p_eps,
-- p_delta), and announce it on channel p_channel (delivered at COMMIT).
-- Takes the locks of dpopt_admit_lock() (again: a no-op when this
-- transaction holds them) and checks the key again.  'basic': the charge
-- fits when spent + charge <= budget in both sums, exactly the UPDATE's
-- WHERE clause it always was.  'renyi': p_spent_old is the spent vector
-- the caller read under this lock, p_spent_new and p_spent_eps what its
-- fit check computed; the write is refused (an error, so the transaction
-- fails closed) unless the stored vector is still p_spent_old.  status:
-- 'admitted' (p_run), 'not_found', 'exists' (the key's run and its request
-- hash) or 'budget' (nothing written; what remains of both sums).
CREATE FUNCTION dpopt_admit(
    p_run uuid, p_dataset uuid, p_tenant text, p_mode text, p_idem text, p_hash text,
    p_algorithm text, p_request jsonb, p_plan jsonb, p_event jsonb, p_eps numeric,
    p_delta numeric, p_steps bigint, p_work double precision, p_timeout integer,
    p_rdp double precision[], p_spent_old double precision[],
    p_spent_new double precision[], p_spent_eps numeric, p_channel text,
    p_actor_tenant text, p_actor_key text, p_actor_role text, p_via text,
    p_request_id text, p_address text, p_detail jsonb)
RETURNS TABLE (status text, run_id uuid, remaining_epsilon text, remaining_delta text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v record;
BEGIN
    SELECT * INTO v FROM dpopt_admit_lock(p_dataset, p_tenant, p_idem);
    IF v.status = 'not_found' THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text;
        RETURN;
    END IF;
    IF v.status = 'exists' THEN
        RETURN QUERY SELECT 'exists'::text, v.run_id, v.request_hash, NULL::text;
        RETURN;
    END IF;
    -- What planning read without the lock and may not change under it.
    IF v.state <> 'sealed' OR v.mode IS DISTINCT FROM p_mode THEN
        RAISE EXCEPTION 'dpopt_admit: dataset % changed since the run was planned', p_dataset;
    END IF;
    IF p_mode = 'basic' THEN
        UPDATE datasets SET spent_epsilon = spent_epsilon + p_eps,
                            spent_delta = spent_delta + p_delta
         WHERE id = v.ledger_id AND spent_epsilon + p_eps <= budget_epsilon
           AND spent_delta + p_delta <= budget_delta;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'budget'::text, NULL::uuid,
                                (d.budget_epsilon - d.spent_epsilon)::text,
                                (d.budget_delta - d.spent_delta)::text
                           FROM datasets d WHERE d.id = v.ledger_id;
            RETURN;
        END IF;
    ELSE
        IF p_rdp IS NULL OR p_spent_old IS NULL OR p_spent_new IS NULL OR p_spent_eps IS NULL
        THEN
            RAISE EXCEPTION 'dpopt_admit: a renyi charge needs its vectors';
        END IF;
        UPDATE datasets SET spent_rdp = p_spent_new,
                            spent_epsilon = least(p_spent_eps, budget_epsilon)
         WHERE id = v.ledger_id AND spent_rdp = p_spent_old;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'dpopt_admit: the filter of % is not the one checked', v.ledger_id;
        END IF;
    END IF;
    INSERT INTO runs (id, dataset_id, tenant_id, algorithm, request, plan, charge_epsilon,
                      charge_delta, steps_total, idempotency_key, request_hash, work,
                      timeout_seconds, charge_rdp)
    VALUES (p_run, p_dataset, p_tenant, p_algorithm, p_request, p_plan, p_eps, p_delta,
            p_steps, p_idem, decode(p_hash, 'hex'), p_work, p_timeout, p_rdp);
    INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta, event, rdp)
    VALUES (v.ledger_id, p_run, 'charge', p_eps, p_delta, p_event, p_rdp);
    INSERT INTO audit_log (tenant_id, actor_key_id, actor_role, via, action, dataset_id,
                           run_id, key_id, request_id, client_address, detail)
    VALUES (p_actor_tenant, p_actor_key, p_actor_role, p_via, 'run.submit', p_dataset, p_run,
            NULL, p_request_id, p_address, coalesce(p_detail, '{}'::jsonb));
    PERFORM pg_notify(p_channel, '');
    RETURN QUERY SELECT 'admitted'::text, p_run, NULL::text, NULL::text;
END;
$$;
