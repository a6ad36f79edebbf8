// The validator (scripts/k8s-validate/validate.mjs) accepts what `tagflow k8s` renders and refuses
// each defect below, naming where it is: a directory rendered from configs/kubernetes.yaml is
// copied and one defect written into each copy.
//   TAGFLOW=build/release/bin/tagflow node --test tests/k8s/validator.test.mjs
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";

const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const validator = path.join(source, "scripts/k8s-validate/validate.mjs");
const tagflow = process.env.TAGFLOW;
assert.ok(tagflow, "set TAGFLOW to the tagflow executable");

const work = fs.mkdtempSync(path.join(os.tmpdir(), "tagflow-k8s-validator-"));
const good = path.join(work, "good");
execFileSync(tagflow, ["k8s", path.join(source, "configs/kubernetes.yaml"), "-o", good,
  "--pod-monitor"], { stdio: "pipe" });

function validate(dir) {
  const run = spawnSync(process.execPath, [validator, dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

/// A copy of the good directory with `file`'s text changed by `edit`.
function withDefect(name, file, edit) {
  const dir = path.join(work, name);
  fs.cpSync(good, dir, { recursive: true });
  const target = path.join(dir, file);
  const before = fs.readFileSync(target, "utf8");
  const after = edit(before);
  assert.notEqual(after, before, `the defect ${name} changed nothing in ${file}`);
  fs.writeFileSync(target, after);
  return dir;
}

test("the rendered directory is valid", () => {
  const { status, output } = validate(good);
  assert.equal(status, 0, output);
  assert.match(output, /6 objects valid \(ConfigMap, Secret, Service, Job, Job, PodMonitor\)/);
});

const defects = [
  ["unknown key deep in a pod template", "job-act.yaml",
    (t) => t.replace("readinessProbe:\n", "readinessProbe:\n            httpGett: {port: 80}\n"),
    /job-act\.yaml: doc 1 \(Job k8s-cartpole-act\): spec\.template\.spec\.containers\[0\]\.readinessProbe\.httpGett: not a field/],
  ["unknown key in a Service spec", "service.yaml",
    (t) => t.replace("clusterIP: None", "clusterIP: None\n  headless: true"),
    /service\.yaml: doc 1 \(Service k8s-cartpole\): spec\.headless: not a field/],
  ["wrong type", "job-act.yaml",
    (t) => t.replace("containerPort: 7610", 'containerPort: "x"'),
    /spec\.template\.spec\.containers\[0\]\.ports\[0\]\.containerPort: type \{"type":"integer"\}/],
  ["missing required field", "job-act.yaml",
    (t) => t.replace("        - name: tagflow\n          image:", "        - image:"),
    /spec\.template\.spec\.containers\[0\]: required \{"missingProperty":"name"\}/],
  ["unknown kind", "service.yaml",
    (t) => t.replace("kind: Service", "kind: Servise"),
    /no schema for v1 Servise/],
  ["kustomization lists a missing file", "kustomization.yaml",
    (t) => t.replace("  - service.yaml", "  - service.yaml\n  - gone.yaml"),
    /kustomization\.yaml: resources: gone\.yaml does not exist/],
  ["a name that is not a DNS name", "job-act.yaml",
    (t) => t.replace("name: k8s-cartpole-act\n", "name: K8s_Cartpole_Act\n"),
    /metadata\.name: 'K8s_Cartpole_Act' is not a valid Job name/],
  ["a mount of no volume", "job-act.yaml",
    (t) => t.replace("- name: run\n              mountPath", "- name: scratch\n              mountPath"),
    /volumeMounts\[1\]\.name: 'scratch' names no volume of the pod/],
  ["a container name over 63 characters", "job-act.yaml",
    (t) => t.replace("        - name: tagflow\n", `        - name: tagflow-${"a".repeat(60)}\n`),
    /containers\[0\]\.name: not a DNS label/],
  ["a subdomain over 63 characters", "job-act.yaml",
    (t) => t.replace(/subdomain: (\S+)/, (_, s) => `subdomain: ${s}-${"b".repeat(64)}`),
    /spec\.template\.spec\.subdomain: not a DNS label/],
  ["a port name with two hyphens in a row", "job-act.yaml",
    (t) => t.replace(/(ports:\n\s*- )name: \S+/, "$1name: data--x"),
    /ports\[0\]\.name: 'data--x' is not a port name/],
  ["a port past 65535", "job-act.yaml",
    (t) => t.replace("containerPort: 7610", "containerPort: 70000"),
    /containerPort: 70000 is outside 1\.\.65535/],
];

for (const [name, file, edit, expected] of defects) {
  test(`refused: ${name}`, () => {
    const { status, output } = validate(withDefect(name.replaceAll(" ", "-"), file, edit));
    assert.equal(status, 1, output);
    assert.match(output, expected);
  });
}

test.after(() => fs.rmSync(work, { recursive: true, force: true }));
