-- 0014_admit_renyi.sql: a 'renyi' admission in one round trip (issue 17).
-- Before (0012), the service read the filter under the ledger's row lock
-- (dpopt_admit_lock), checked the fit in C and wrote with dpopt_admit: two
-- round trips under the lock.  Now the fit check runs here, in the same
-- statement as the charge, with the arithmetic of the C check
-- (algorithms/privacy/filter.c): for every order i,
--     new[i] = up(spent[i] + up(rdp[i])),   up(x) = nextafter(x, +inf),
-- the run fits when new[i] <= cap[i] at some order, and then every spent[i]
-- becomes new[i].  float8 addition and comparison are IEEE binary64 here as
-- in C, and dpopt_up() is nextafter(x, +inf) for the values the filter
-- holds (finite, >= 0), so the decision is bit for bit the C one
-- (tests/integration/test_renyi_sql.c checks it at the edge, at every
-- order: a run that fits exactly is admitted, one ulp more is refused).
-- The indicative spent epsilon (filter_spent_epsilon(); never a decision)
-- uses ln(), PostgreSQL's call of the C library's log().
--
-- The run's curve on the filter's orders (rounded up once, as
-- ledger_rdp_on_filter() does) is computed by the service before the lock:
-- the orders are fixed when the ledger is created and never change.  The
-- service passes the orders it used and the statement refuses (an error:
-- fail closed) unless they are the stored ones.
--
-- The lock order is service/ledger.h's, the steps of dpopt_admit_lock()
-- (0012) inline: 1. the ledger's root row, 2. the dataset's own row,
-- 3. inserts into runs, ledger_entries and audit_log.  0012's functions stay for replicas that
-- still call them during a rolling upgrade.

-- nextafter(x, +inf) for finite x >= 0: x plus the spacing of binary64 at
-- x, 2^(E - 1075) for the biased exponent E >= 1, 2^-1074 for subnormals
-- and zero; exact (the sum is the next representable value).  Anything
-- else is an error: the filter never holds it (filter_fits() refuses it).
CREATE FUNCTION dpopt_up(x double precision) RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
    IF NOT (x >= 0 AND x < 'Infinity'::double precision) THEN
        RAISE EXCEPTION 'dpopt_up: % is not finite and >= 0', x;
    END IF;
    RETURN x + power(2::double precision,
                     greatest(((('x' || encode(float8send(x), 'hex'))::bit(64)::bigint >> 52)
                               & 2047)::integer, 1) - 1075);
END;
$$;

-- filter_fits() and filter_add() of algorithms/privacy/filter.c: fits when
-- up(spent[i] + up(rdp[i])) <= caps[i] at some order; spent: the vector
-- after the charge (every order), whether or not it fits.
CREATE FUNCTION dpopt_filter_fit(p_spent double precision[], p_caps double precision[],
                                 p_rdp double precision[], OUT fits boolean,
                                 OUT spent double precision[])
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m integer := cardinality(p_spent);
    v double precision;
BEGIN
    IF m IS NULL OR m < 1 OR cardinality(p_caps) IS DISTINCT FROM m
       OR cardinality(p_rdp) IS DISTINCT FROM m THEN
        RAISE EXCEPTION 'dpopt_filter_fit: vectors of different lengths';
    END IF;
    fits := false;
    spent := p_spent;
    FOR i IN 1 .. m LOOP
        v := dpopt_up(p_spent[i] + dpopt_up(p_rdp[i]));
        IF v <= p_caps[i] THEN
            fits := true;
        END IF;
        spent[i] := v;
    END LOOP;
END;
$$;

-- filter_spent_epsilon() (indicative): 0 when nothing is spent; else the
-- smallest spent[i] + ln((a-1)/a) - (ln(delta/m) + ln(a))/(a-1) over the
-- orders not exceeded, at least 0; NULL when every order is exceeded.
CREATE FUNCTION dpopt_filter_spent_epsilon(p_orders double precision[],
                                           p_caps double precision[],
                                           p_spent double precision[],
                                           p_delta double precision)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m integer := cardinality(p_spent);
    a double precision;
    v double precision;
    best double precision;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM unnest(p_spent) s WHERE s > 0) THEN
        RETURN 0;
    END IF;
    FOR i IN 1 .. m LOOP
        CONTINUE WHEN p_spent[i] > p_caps[i];
        a := p_orders[i];
        v := p_spent[i] + ln((a - 1.0::double precision) / a)
             - (ln(p_delta / m::double precision) + ln(a)) / (a - 1.0::double precision);
        best := least(best, v);
    END LOOP;
    RETURN greatest(best, 0);
END;
$$;

-- dpopt_admit2: dpopt_admit (0012) with the 'renyi' fit check done here.
-- 'basic': unchanged (p_orders and p_rdp NULL).  'renyi': p_orders are the
-- orders the service computed p_rdp on (must be the ledger's), p_rdp the
-- run's curve on them rounded up once.  status: 'admitted' (p_run),
-- 'not_found', 'exists' (the key's run and its request hash in
-- remaining_epsilon), 'budget' (nothing written; 'basic': what remains of
-- both sums; 'renyi': the filter's caps and spent vector, as text).
CREATE FUNCTION dpopt_admit2(
    p_run uuid, p_dataset uuid, p_tenant text, p_mode text, p_idem text, p_hash text,
    p_algorithm text, p_request jsonb, p_plan jsonb, p_event jsonb, p_eps numeric,
    p_delta numeric, p_steps bigint, p_work double precision, p_timeout integer,
    p_orders double precision[], p_rdp double precision[], p_channel text,
    p_actor_tenant text, p_actor_key text, p_actor_role text, p_via text,
    p_request_id text, p_address text, p_detail jsonb)
RETURNS TABLE (status text, run_id uuid, remaining_epsilon text, remaining_delta text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_ledger uuid;
    v_mode text;
    v_state text;
    v_run uuid;
    v_hash text;
    f record;
    fit record;
BEGIN
    -- The steps of dpopt_admit_lock() (0012), inline (a nested function
    -- call and its three statements cost about a tenth of the admission's
    -- PostgreSQL time).  Step 1: the ledger's root row; ledger_of never
    -- changes after creation, so resolving it without a lock cannot pick
    -- a stale root.
    SELECT l.id, l.accounting_mode, l.state, l.filter_orders, l.filter_caps, l.spent_rdp,
           l.budget_delta::double precision AS bd
      INTO f FROM datasets l
     WHERE l.id = (SELECT coalesce(d.ledger_of, d.id) FROM datasets d
                    WHERE d.id = p_dataset AND d.tenant_id = p_tenant)
       FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text;
        RETURN;
    END IF;
    v_ledger := f.id;
    v_mode := f.accounting_mode;
    v_state := f.state;
    -- Step 2: the dataset's own row, when it only shares the ledger.
    IF v_ledger <> p_dataset THEN
        SELECT d.state INTO v_state FROM datasets d WHERE d.id = p_dataset FOR NO KEY UPDATE;
    END IF;
    IF v_state = 'deleted' THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::uuid, NULL::text, NULL::text;
        RETURN;
    END IF;
    IF p_idem IS NOT NULL THEN
        SELECT r.id, encode(r.request_hash, 'hex') INTO v_run, v_hash FROM runs r
         WHERE r.tenant_id = p_tenant AND r.idempotency_key = p_idem;
        IF FOUND THEN
            RETURN QUERY SELECT 'exists'::text, v_run, v_hash, NULL::text;
            RETURN;
        END IF;
    END IF;
    -- What planning read without the lock and may not change under it.
    IF v_state <> 'sealed' OR v_mode IS DISTINCT FROM p_mode THEN
        RAISE EXCEPTION 'dpopt_admit2: dataset % changed since the run was planned', p_dataset;
    END IF;
    IF p_mode = 'basic' THEN
        UPDATE datasets SET spent_epsilon = spent_epsilon + p_eps,
                            spent_delta = spent_delta + p_delta
         WHERE id = v_ledger AND spent_epsilon + p_eps <= budget_epsilon
           AND spent_delta + p_delta <= budget_delta;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'budget'::text, NULL::uuid,
                                (d.budget_epsilon - d.spent_epsilon)::text,
                                (d.budget_delta - d.spent_delta)::text
                           FROM datasets d WHERE d.id = v_ledger;
            RETURN;
        END IF;
    ELSE
        IF p_rdp IS NULL OR p_orders IS NULL THEN
            RAISE EXCEPTION 'dpopt_admit2: a renyi charge needs its curve and orders';
        END IF;
        -- The filter as read under the lock in step 1, as float8 (never
        -- through text).
        IF f.filter_orders IS DISTINCT FROM p_orders THEN
            RAISE EXCEPTION 'dpopt_admit2: the curve of % is not on the filter''s orders',
                            v_ledger;
        END IF;
        SELECT * INTO fit FROM dpopt_filter_fit(f.spent_rdp, f.filter_caps, p_rdp);
        IF NOT fit.fits THEN
            RETURN QUERY SELECT 'budget'::text, NULL::uuid, f.filter_caps::text,
                                f.spent_rdp::text;
            RETURN;
        END IF;
        UPDATE datasets SET spent_rdp = fit.spent,
                            spent_epsilon = least(coalesce(dpopt_filter_spent_epsilon(
                                f.filter_orders, f.filter_caps, fit.spent, f.bd), 0)::text::numeric,
                                budget_epsilon)
         WHERE id = v_ledger;
    END IF;
    INSERT INTO runs (id, dataset_id, tenant_id, algorithm, request, plan, charge_epsilon,
                      charge_delta, steps_total, idempotency_key, request_hash, work,
                      timeout_seconds, charge_rdp)
    VALUES (p_run, p_dataset, p_tenant, p_algorithm, p_request, p_plan, p_eps, p_delta,
            p_steps, p_idem, decode(p_hash, 'hex'), p_work, p_timeout, p_rdp);
    INSERT INTO ledger_entries (dataset_id, run_id, kind, epsilon, delta, event, rdp)
    VALUES (v_ledger, p_run, 'charge', p_eps, p_delta, p_event, p_rdp);
    INSERT INTO audit_log (tenant_id, actor_key_id, actor_role, via, action, dataset_id,
                           run_id, key_id, request_id, client_address, detail)
    VALUES (p_actor_tenant, p_actor_key, p_actor_role, p_via, 'run.submit', p_dataset, p_run,
            NULL, p_request_id, p_address, coalesce(p_detail, '{}'::jsonb));
    PERFORM pg_notify(p_channel, '');
    RETURN QUERY SELECT 'admitted'::text, p_run, NULL::text, NULL::text;
END;
$$;
