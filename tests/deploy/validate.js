// validate.js FILE.json: each Kubernetes object of the JSON array in FILE
// validates against its kind's API schema (kubernetes-models: the
// Kubernetes OpenAPI definitions compiled to validators).  Prints one line
// per object; exits 1 when any fails or has an unknown apiVersion/kind.
"use strict";
const fs = require("fs");
const objs = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let bad = 0;
for (const o of objs) {
  const name = `${o.apiVersion} ${o.kind} ${o.metadata && o.metadata.name}`;
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : [null, o.apiVersion];
  const mod = group === null ? `kubernetes-models/${version}` : `kubernetes-models/${group}/${version}`;
  let Kind;
  try {
    Kind = require(mod)[o.kind];
  } catch (e) {
    Kind = undefined;
  }
  if (typeof Kind !== "function") {
    console.log(`FAIL ${name}: no schema for this apiVersion and kind`);
    bad++;
    continue;
  }
  try {
    new Kind(o).validate();
    console.log(`ok ${name}`);
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    bad++;
  }
}
if (objs.length === 0) {
  console.log("FAIL: no objects rendered");
  bad++;
}
process.exit(bad === 0 ? 0 : 1);
