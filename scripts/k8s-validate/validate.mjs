// Validates directories written by `tagflow k8s` without a cluster (README.md beside this file):
//   node scripts/k8s-validate/validate.mjs DIR [DIR...]
// Exit 0: every object valid; 1: problems (each printed); 2: usage.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";

import { validate as configMap } from "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap";
import { validate as secret } from "kubernetes-models/_schemas/IoK8sApiCoreV1Secret";
import { validate as service } from "kubernetes-models/_schemas/IoK8sApiCoreV1Service";
import { validate as serviceAccount } from "kubernetes-models/_schemas/IoK8sApiCoreV1ServiceAccount";
import { validate as job } from "kubernetes-models/_schemas/IoK8sApiBatchV1Job";
import { validate as statefulSet } from "kubernetes-models/_schemas/IoK8sApiAppsV1StatefulSet";
import { validate as podMonitor } from "./node_modules/@kubernetes-models/prometheus-operator/_schemas/ComGithubPrometheusOperatorPrometheusOperatorPkgApisMonitoringV1PodMonitor.js";  // the package exports no schemas

// apiVersion + kind -> the schema's compiled validator and its id (for messages).
const schemas = {
  "v1 ConfigMap": [configMap, "io.k8s.api.core.v1.ConfigMap"],
  "v1 Secret": [secret, "io.k8s.api.core.v1.Secret"],
  "v1 Service": [service, "io.k8s.api.core.v1.Service"],
  "v1 ServiceAccount": [serviceAccount, "io.k8s.api.core.v1.ServiceAccount"],
  "batch/v1 Job": [job, "io.k8s.api.batch.v1.Job"],
  "apps/v1 StatefulSet": [statefulSet, "io.k8s.api.apps.v1.StatefulSet"],
  "monitoring.coreos.com/v1 PodMonitor": [podMonitor, "com.coreos.monitoring.v1.PodMonitor"],
};

// kubectl reads YAML 1.1 (0400 is octal there, `yes` a boolean): so does this.
const yaml11 = { version: "1.1" };

const kustomizationKeys = new Set([
  "apiVersion", "kind", "namespace", "resources", "labels", "commonLabels", "commonAnnotations",
]);

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1035Label = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
// IANA_SVC_NAME: at most 15 characters, at least one letter, no hyphen at either end or beside
// another.
const portName = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/// RFC 1123 label: what a container name, a pod's subdomain and a Service's name must be.
function isDnsLabel(value) {
  return typeof value === "string" && value.length <= 63 && dnsLabel.test(value);
}

/// A view of `value` that records, in `seen`, every key path the schema's validator reads. The
/// compiled validators read each property their schema defines, and enumerate the keys of the
/// free-form maps (labels, data, resources.limits): a key never read is not in the schema.
function tracked(value, at, seen) {
  if (value === null || typeof value !== "object") return value;
  return new Proxy(value, {
    get(target, key) {
      if (typeof key !== "string") return target[key];
      seen.add(`${at}/${key}`);
      return tracked(target[key], `${at}/${key}`, seen);
    },
    ownKeys(target) {
      for (const key of Reflect.ownKeys(target)) seen.add(`${at}/${key}`);
      return Reflect.ownKeys(target);
    },
  });
}

/// "a/b/0/c" -> "a.b[0].c"
function dotted(pointer) {
  return pointer
    .split("/")
    .filter((part) => part !== "")
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : (i === 0 ? part : `.${part}`)))
    .join("");
}

function unknownKeys(value, at, seen, out) {
  if (value === null || typeof value !== "object") return;
  for (const key of Object.keys(value)) {
    const child = `${at}/${key}`;
    if (!seen.has(child)) {
      out.push(child);
      continue;  // its own keys are unknown with it
    }
    unknownKeys(value[key], child, seen, out);
  }
}

/// What the API server enforces on these objects beyond the schemas: names, label values, ports.
function serverRules(object, report) {
  const name = object?.metadata?.name ?? "";
  const nameRule = object.kind === "Service" ? dns1035Label : dnsSubdomain;
  if (!nameRule.test(name) || name.length > (object.kind === "Service" ? 63 : 253)) {
    report("metadata.name", `'${name}' is not a valid ${object.kind} name`);
  }
  const labelsAt = [["metadata.labels", object?.metadata?.labels]];
  const template = object?.spec?.template;
  if (template) labelsAt.push(["spec.template.metadata.labels", template?.metadata?.labels]);
  for (const [where, labels] of labelsAt) {
    for (const [key, value] of Object.entries(labels ?? {})) {
      if (typeof value !== "string" || value.length > 63 || !labelValue.test(value)) {
        report(`${where}.${key}`, `'${value}' is not a valid label value`);
      }
    }
  }
  const containers = template?.spec?.containers ?? [];
  containers.forEach((container, i) => {
    const at = `spec.template.spec.containers[${i}]`;
    if (!isDnsLabel(container?.name ?? "")) {
      report(`${at}.name`, "not a DNS label (at most 63 of a-z, 0-9 and -)");
    }
    (container?.ports ?? []).forEach((port, j) => {
      const p = port?.containerPort;
      if (!Number.isInteger(p) || p < 1 || p > 65535) {
        report(`${at}.ports[${j}].containerPort`, `${p} is outside 1..65535`);
      }
      const n = port?.name;
      if (n !== undefined && (n.length > 15 || !portName.test(n) || !/[a-z]/.test(n))) {
        report(`${at}.ports[${j}].name`, `'${n}' is not a port name (IANA_SVC_NAME)`);
      }
    });
  });
  const volumes = new Set((template?.spec?.volumes ?? []).map((volume) => volume?.name));
  containers.forEach((container, i) => {
    (container?.volumeMounts ?? []).forEach((mount, j) => {
      if (!volumes.has(mount?.name)) {
        report(`spec.template.spec.containers[${i}].volumeMounts[${j}].name`,
          `'${mount?.name}' names no volume of the pod`);
      }
    });
  });
  if (template?.spec?.subdomain !== undefined && !isDnsLabel(template.spec.subdomain)) {
    report("spec.template.spec.subdomain", "not a DNS label (at most 63 of a-z, 0-9 and -)");
  }
}

function checkDirectory(dir, problems) {
  const kinds = [];
  const kustomizationFile = path.join(dir, "kustomization.yaml");
  if (!fs.existsSync(kustomizationFile)) {
    problems.push(`${dir}: no kustomization.yaml`);
    return kinds;
  }
  const kustomization = YAML.parse(fs.readFileSync(kustomizationFile, "utf8"), yaml11) ?? {};
  const at = (message) => problems.push(`${path.join(dir, "kustomization.yaml")}: ${message}`);
  if (kustomization.apiVersion !== "kustomize.config.k8s.io/v1beta1") {
    at(`apiVersion: '${kustomization.apiVersion}' is not kustomize.config.k8s.io/v1beta1`);
  }
  if (kustomization.kind !== "Kustomization") at(`kind: '${kustomization.kind}' is not Kustomization`);
  for (const key of Object.keys(kustomization)) {
    if (!kustomizationKeys.has(key)) at(`${key}: not a key this validator knows of a Kustomization`);
  }
  for (const resource of kustomization.resources ?? []) {
    const file = path.join(dir, resource);
    if (!fs.existsSync(file)) {
      at(`resources: ${resource} does not exist`);
      continue;
    }
    const documents = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"), yaml11);
    documents.forEach((document, index) => {
      const object = document.toJS();
      if (object === null || object === undefined) return;
      const label = `${path.join(dir, resource)}: doc ${index + 1} (${object.kind} ${object?.metadata?.name})`;
      const report = (where, message) => problems.push(`${label}: ${where}: ${message}`);
      const found = schemas[`${object.apiVersion} ${object.kind}`];
      if (!found) {
        problems.push(`${label}: no schema for ${object.apiVersion} ${object.kind}`);
        return;
      }
      const [validate, id] = found;
      const seen = new Set();
      if (!validate(tracked(object, "", seen))) {
        for (const error of validate.errors ?? []) {
          const where = dotted(error.instancePath) || "(object)";
          report(where, `${error.message ?? error.keyword} ${JSON.stringify(error.params)} (${id})`);
        }
      }
      const unknown = [];
      unknownKeys(object, "", seen, unknown);
      for (const pointer of unknown) report(dotted(pointer), `not a field of ${id} (or of the type it nests)`);
      serverRules(object, report);
      kinds.push(object.kind);
    });
  }
  return kinds;
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: node scripts/k8s-validate/validate.mjs DIR [DIR...]");
  process.exit(2);
}
const problems = [];
for (const dir of dirs) {
  const before = problems.length;
  const kinds = checkDirectory(dir, problems);
  if (problems.length === before) {
    console.log(`k8s-validate: ${dir}: ${kinds.length} objects valid (${kinds.join(", ")})`);
  }
}
for (const problem of problems) console.error(`k8s-validate: ${problem}`);
process.exit(problems.length === 0 ? 0 : 1);
