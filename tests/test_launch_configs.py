"""SGLang `--config` files a deployment puts where the launch runs: a Kubernetes ConfigMap mounted
into the container, read as the pod reads it (in the same manifest or another file `check --file`
reads), and a file the deployment does not define, which is not on this machine."""

from __future__ import annotations

import json

from extractor.cli import main
from extractor.logic.launch_files import config_maps, config_mounts, mounted_files

from .test_check import OFFLOAD, rules_file, ruleset  # noqa: F401 - fixtures

CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: sglang-config
data:
  serve.yaml: |
    model-path: m
    disaggregation-mode: prefill
  other.txt: not a config
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  template:
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:latest
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--config", "/etc/sglang/serve.yaml", "--offload-kvcache"]
          volumeMounts:
            - name: config
              mountPath: /etc/sglang
      volumes:
        - name: config
          configMap:
            name: sglang-config
"""


def test_a_config_maps_keys_are_files_in_the_folder_it_is_mounted_at() -> None:
    maps = config_maps(CONFIG_MAP + "---\n" + DEPLOYMENT)
    assert maps == {"sglang-config": {"serve.yaml": "model-path: m\ndisaggregation-mode: prefill\n",
                                      "other.txt": "not a config"}}
    assert mounted_files(config_mounts(DEPLOYMENT), maps) == {
        "/etc/sglang/serve.yaml": "model-path: m\ndisaggregation-mode: prefill\n",
        "/etc/sglang/other.txt": "not a config"}
    # `items` choose keys and the paths they take; `subPath` mounts one item at `mountPath` itself.
    chosen = DEPLOYMENT.replace("            name: sglang-config\n",
                                "            name: sglang-config\n            items:\n"
                                "              - {key: serve.yaml, path: server.yaml}\n")
    assert mounted_files(config_mounts(chosen), maps) == {
        "/etc/sglang/server.yaml": "model-path: m\ndisaggregation-mode: prefill\n"}
    one = DEPLOYMENT.replace("mountPath: /etc/sglang", "mountPath: /srv/serve.yaml\n              subPath: serve.yaml")
    assert mounted_files(config_mounts(one), maps) == {"/srv/serve.yaml": "model-path: m\ndisaggregation-mode: prefill\n"}
    # A ConfigMap defined nowhere `check` reads puts no file: not known here.
    assert mounted_files(config_mounts(DEPLOYMENT), {}) == {}


def test_a_launch_reads_the_config_its_deployment_mounts(rules_file, tmp_path, capsys) -> None:  # noqa: F811
    (tmp_path / "deployment.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    # Without the ConfigMap the file is not on this machine: every option the line leaves out is unknown.
    assert main(["check", "--rules", str(rules_file), "--file", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "note: --config /etc/sglang/serve.yaml is not on this machine" in out and "error[definite]" not in out
    # With it, in another file of the folder: the line checked as SGLang merges the file, its own words last.
    (tmp_path / "configmap.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--file", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "error[definite] " in out and OFFLOAD in out
    assert "note: the --config file read from the ConfigMap the deployment mounts at its path" in out
    assert main(["check", "--rules", str(rules_file), "--format", "json", "--file", str(tmp_path)]) == 1
    assert json.loads(capsys.readouterr().out)["commands"][0]["config_mounted"] is True
    # A mounted file SGLang's merger refuses: its error, as SGLang words it.
    (tmp_path / "configmap.yaml").write_text(CONFIG_MAP.replace("model-path: m", "model_path: m"), encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--file", str(tmp_path)]) == 1
    assert "error[argument] the following arguments are required: --model-path" in capsys.readouterr().out
    (tmp_path / "configmap.yaml").write_text(CONFIG_MAP.replace("    model-path: m\n    disaggregation-mode: prefill\n", "    - m\n"), encoding="utf-8")
    assert main(["check", "--rules", str(rules_file), "--file", str(tmp_path)]) == 1
    assert "error[argument] Config file must contain a dictionary at root level" in capsys.readouterr().out
    (tmp_path / "configmap.yaml").write_text(CONFIG_MAP, encoding="utf-8")
    # The line's own words win over the file's, as in SGLang.
    (tmp_path / "deployment.yaml").write_text(
        DEPLOYMENT.replace('"--offload-kvcache"]', '"--offload-kvcache", "--disaggregation-mode", "decode"]'),
        encoding="utf-8")
    main(["check", "--rules", str(rules_file), "--file", str(tmp_path)])
    assert OFFLOAD not in capsys.readouterr().out
