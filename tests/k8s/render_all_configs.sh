#!/usr/bin/env bash
# Renders every file of configs/ that `tagflow k8s` accepts (hosts with an address get --cpu 1
# --memory 1Gi), then checks every rendered directory offline: against Kubernetes' own schemas,
# unknown keys refused (scripts/k8s-validate/validate.mjs), and through `kubectl kustomize`.
#   render_all_configs.sh TAGFLOW SOURCE_DIR WORK_DIR
set -euo pipefail
tagflow=$1 source=$2 work=$3
validator=$source/scripts/k8s-validate
[[ -d $validator/node_modules ]] || { echo "no $validator/node_modules: run scripts/setup" >&2; exit 1; }
command -v kubectl >/dev/null || { echo "no kubectl: run scripts/setup (kubernetes-client)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
accepted=()
for file in "$source"/configs/*.yaml; do
  name=$(basename "$file" .yaml)
  status=0
  "$tagflow" k8s "$file" -o "$work/$name" --cpu 1 --memory 1Gi --pod-monitor \
    >"$work/$name.out" 2>&1 || status=$?
  case $status in
    0) accepted+=("$work/$name") ;;
    2) echo "refused: $(grep -m1 "$file" "$work/$name.out")" ;;  # file:line: key: why
    *) echo "tagflow k8s $file failed ($status):" >&2; cat "$work/$name.out" >&2; exit 1 ;;
  esac
done
# The two demo files must be among them: the Kubernetes one and the one-host demo (one pod).
for must in kubernetes local; do
  [[ " ${accepted[*]} " == *" $work/$must "* ]] || { echo "configs/$must.yaml was refused" >&2; exit 1; }
done
node "$validator/validate.mjs" "${accepted[@]}"
for dir in "${accepted[@]}"; do
  kubectl kustomize "$dir" >"$dir.rendered.yaml"
  objects=$(grep -c '^kind: ' "$dir.rendered.yaml")
  listed=$(grep -c '^  - ' "$dir/kustomization.yaml")
  [[ $objects == "$listed" ]] || { echo "kubectl kustomize $dir: $objects objects, $listed listed" >&2; exit 1; }
  echo "kubectl kustomize: $dir: $objects objects"
done
echo "${#accepted[@]} of $(ls "$source"/configs/*.yaml | wc -l) files rendered and valid"
