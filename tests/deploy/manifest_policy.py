"""manifest_policy.py BASE.json DEV.json: what an operator relies on in the
rendered manifests (deploy/kubernetes), so that an edit dropping one fails.

Each check prints "ok NAME" or "FAIL NAME: why"; the last line is
"N passed, N failed".
"""
import json
import sys

results = []


def check(name, cond, why=""):
    results.append(bool(cond))
    print(("ok %s" % name) if cond else ("FAIL %s: %s" % (name, why)))


def one(objs, kind, name=None):
    found = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found[0] if len(found) == 1 else None


def port_number(container, port):
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    return None


def check_container(where, c, serving):
    sc = c.get("securityContext", {})
    check(where + ": no privilege escalation", sc.get("allowPrivilegeEscalation") is False)
    check(where + ": read-only root filesystem", sc.get("readOnlyRootFilesystem") is True)
    check(where + ": runAsNonRoot", sc.get("runAsNonRoot") is True)
    check(where + ": drops ALL capabilities", sc.get("capabilities", {}).get("drop") == ["ALL"]
          and not sc.get("capabilities", {}).get("add"))
    check(where + ": not privileged", not sc.get("privileged", False))
    res = c.get("resources", {})
    for k in ("requests", "limits"):
        check("%s: resources.%s cpu and memory" % (where, k),
              "cpu" in res.get(k, {}) and "memory" in res.get(k, {}))
    env = {e["name"]: e for e in c.get("env", [])}
    url = env.get("DPOPT_DATABASE_URL", {}).get("valueFrom", {}).get("secretKeyRef")
    check(where + ": DPOPT_DATABASE_URL from a Secret", url is not None and url.get("key"))
    check(where + ": settings from the ConfigMap",
          any(f.get("configMapRef", {}).get("name") == "dpopt-config" for f in c.get("envFrom", [])))
    if not serving:
        return
    probes = {p: c.get(p, {}).get("httpGet", {}) for p in ("livenessProbe", "readinessProbe", "startupProbe")}
    check(where + ": liveness GET /healthz", probes["livenessProbe"].get("path") == "/healthz")
    check(where + ": readiness GET /readyz", probes["readinessProbe"].get("path") == "/readyz")
    check(where + ": startup probe", probes["startupProbe"].get("path") in ("/healthz", "/readyz"))
    check(where + ": probes on the HTTP port 8080",
          all(port_number(c, p.get("port")) == 8080 for p in probes.values()))
    mounts = [m["mountPath"] for m in c.get("volumeMounts", [])]
    check(where + ": writable /tmp volume", "/tmp" in mounts)


def check_base(objs, label):
    config = one(objs, "ConfigMap", "dpopt-config")
    check(label + ": ConfigMap dpopt-config", config is not None)
    data = config["data"] if config else {}
    check(label + ": JSON log lines on stdout", data.get("DPOPT_LOG_FORMAT") == "json")
    check(label + ": listens on every address", data.get("DPOPT_LISTEN", "").startswith("0.0.0.0:8080"))
    d = one(objs, "Deployment", "dpopt")
    check(label + ": Deployment dpopt", d is not None)
    if d is None:
        return
    spec = d["spec"]
    pod = spec["template"]["spec"]
    check(label + ": 2 replicas", spec.get("replicas") == 2)
    ru = spec.get("strategy", {}).get("rollingUpdate", {})
    check(label + ": rolling update, maxUnavailable 0",
          spec.get("strategy", {}).get("type") == "RollingUpdate" and ru.get("maxUnavailable") == 0)
    psc = pod.get("securityContext", {})
    check(label + ": pod runAsNonRoot, fixed UID", psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) > 0)
    check(label + ": pod seccomp RuntimeDefault", psc.get("seccompProfile", {}).get("type") == "RuntimeDefault")
    check(label + ": no service account token", pod.get("automountServiceAccountToken") is False)
    grace = int(data.get("DPOPT_SHUTDOWN_GRACE_SECONDS", "10"))
    bound = int(data.get("DPOPT_SHUTDOWN_SECONDS", "25"))
    tgp = pod.get("terminationGracePeriodSeconds", 30)
    # dpoptd ends its drain within DPOPT_SHUTDOWN_SECONDS; SIGKILL must come
    # later (a margin of 3 s), and the requests' grace fits inside.
    check(label + ": terminationGracePeriodSeconds above DPOPT_SHUTDOWN_SECONDS",
          tgp >= bound + 3, "%s < %s + 3" % (tgp, bound))
    delay = int(data.get("DPOPT_SHUTDOWN_DELAY_SECONDS", "0"))
    check(label + ": a readiness delay before the listener closes", delay >= 1)
    check(label + ": delay + request grace below DPOPT_SHUTDOWN_SECONDS", delay + grace < bound)
    containers = {c["name"]: c for c in pod.get("containers", [])}
    check(label + ": container dpoptd", "dpoptd" in containers)
    if "dpoptd" in containers:
        check_container(label + " dpoptd", containers["dpoptd"], True)
    inits = {c["name"]: c for c in pod.get("initContainers", [])}
    check(label + ": migration init container runs `dpoptd migrate`",
          "migrate" in inits and inits["migrate"].get("args") == ["migrate"])
    if "migrate" in inits:
        check_container(label + " migrate", inits["migrate"], False)
    ann = spec["template"]["metadata"].get("annotations", {})
    check(label + ": Prometheus scrape annotations",
          ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/path") == "/metrics"
          and ann.get("prometheus.io/port") == "8080")
    pod_labels = spec["template"]["metadata"].get("labels", {})

    def selects(sel):
        return bool(sel) and all(pod_labels.get(k) == v for k, v in sel.items())

    svc = one(objs, "Service", "dpopt")
    check(label + ": Service selects the pods", svc is not None and selects(svc["spec"].get("selector")))
    pdb = one(objs, "PodDisruptionBudget", "dpopt")
    check(label + ": PodDisruptionBudget minAvailable 1, selecting the pods",
          pdb is not None and pdb["spec"].get("minAvailable") == 1
          and selects(pdb["spec"].get("selector", {}).get("matchLabels")))
    hpa = one(objs, "HorizontalPodAutoscaler", "dpopt")
    check(label + ": HPA on CPU for the Deployment",
          hpa is not None and hpa["spec"]["scaleTargetRef"]["name"] == "dpopt"
          and hpa["spec"].get("minReplicas", 1) >= 2
          and any(m.get("resource", {}).get("name") == "cpu" for m in hpa["spec"].get("metrics", [])))
    np = one(objs, "NetworkPolicy", "dpopt")
    ok = np is not None and selects(np["spec"]["podSelector"].get("matchLabels"))
    if ok:
        ing = np["spec"].get("ingress", [])
        eg = np["spec"].get("egress", [])
        in_ports = sorted(p.get("port") for r in ing for p in r.get("ports", []))
        eg_ports = sorted(set(p.get("port") for r in eg for p in r.get("ports", [])))
        ok = (sorted(np["spec"].get("policyTypes", [])) == ["Egress", "Ingress"]
              and in_ports == [8080] and all(r.get("ports") for r in ing)
              and eg_ports == [53, 5432] and all(r.get("ports") for r in eg))
    check(label + ": NetworkPolicy: ingress only to 8080, egress only to PostgreSQL (and DNS)", ok)


def main():
    base = json.load(open(sys.argv[1]))
    dev = json.load(open(sys.argv[2]))
    check_base(base, "base")
    check_base(dev, "dev")
    check("base: no database password", one(base, "Secret") is None and one(base, "StatefulSet") is None)
    ss = one(dev, "StatefulSet", "dpopt-postgres")
    ok = ss is not None and ss["spec"].get("replicas") == 1
    if ok:
        c = ss["spec"]["template"]["spec"]["containers"][0]
        ok = (c["image"].endswith("postgres:15") and ss["spec"].get("volumeClaimTemplates")
              and any(m["name"] == ss["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
                      for m in c.get("volumeMounts", [])))
    check("dev: PostgreSQL 15 StatefulSet, one replica, data on a PVC", ok)
    secret = one(dev, "Secret", "dpopt-database")
    check("dev: Secret dpopt-database names the dev PostgreSQL",
          secret is not None and "host=dpopt-postgres" in secret.get("stringData", {}).get("url", ""))
    check("dev: one namespace for all", len({o["metadata"].get("namespace") for o in dev
                                             if o["kind"] != "Namespace"}) == 1)
    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    sys.exit(0 if passed == len(results) else 1)


main()
