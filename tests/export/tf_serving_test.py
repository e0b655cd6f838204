"""The SavedModel as TensorFlow Serving reads it: `saved_model_cli show` lists its
signatures (`serving_default` beside the named endpoints) and `saved_model_cli run` runs
`serving_default` in a TF1 session, the way the model server loads it, with the outputs of
the Translator. (saved_model_cli registers no custom ops: it runs in an interpreter that
imported tensorflow_text first, as the model server links tensorflow-text's ops.)"""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from export_toy import SENTENCES

from zoo.export import OUTPUT_KEYS

SAVED_MODEL_CLI = (
    "import sys, tensorflow_text; from tensorflow.python.tools import saved_model_cli; "
    "sys.argv[0] = 'saved_model_cli'; saved_model_cli.main()"
)


def _cli(*arguments):
    done = subprocess.run(
        [sys.executable, "-c", SAVED_MODEL_CLI, *arguments],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _signatures(shown):
    """{signature: {"inputs": {name: (dtype, shape)}, "outputs": {...}, "method": str}} read
    from `saved_model_cli show --all`."""
    signatures = {}
    for block in re.split(r"^signature_def\['", shown, flags=re.M)[1:]:
        name = block.split("'", 1)[0]
        found = re.findall(
            r"(inputs|outputs)\['(\w+)'\] tensor_info:\s+dtype: (\w+)\s+shape: (.+)", block
        )
        signatures[name] = {
            "inputs": {
                key: (dtype, shape) for side, key, dtype, shape in found if side == "inputs"
            },
            "outputs": {
                key: (dtype, shape) for side, key, dtype, shape in found if side == "outputs"
            },
            "method": re.search(r"Method name is: (.*)", block)[1].strip(),
        }
    return signatures


def test_saved_model_cli_shows_serving_default_beside_the_endpoints(writing_export):
    _, path, _ = writing_export
    signatures = _signatures(_cli("show", "--dir", path, "--tag_set", "serve", "--all"))
    served = ["sample", "serving_default", "translate", "translate_greedy", "translate_n_best"]
    assert sorted(set(signatures) - {"__saved_model_init_op"}) == served
    sentences = {"sentences": ("DT_STRING", "(-1)")}
    for name in served:
        assert signatures[name]["method"] == "tensorflow/serving/predict"
        expected = {**sentences, "seed": ("DT_INT64", "()")} if name == "sample" else sentences
        assert signatures[name]["inputs"] == expected, name
    default = signatures["serving_default"]
    assert default == signatures["translate"]
    assert sorted(default["outputs"]) == sorted(OUTPUT_KEYS)
    assert default["outputs"]["translation"] == ("DT_STRING", "(-1)")
    assert default["outputs"]["attention"] == ("DT_FLOAT", "(-1, -1, -1)")
    assert sorted(signatures["translate_n_best"]["outputs"]) == ["scores", "translations"]


@pytest.mark.slow
def test_saved_model_cli_runs_serving_default_as_the_translator_translates(
    writing_export, tmp_path
):
    translator, path, _ = writing_export
    sentences = [s for s in SENTENCES[:6] if ";" not in s and "=" not in s] + ["", "Ωμέγα ☃"]
    _cli(
        "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
        "--input_exprs", f"sentences={json.dumps(sentences)}",
        "--outdir", str(tmp_path), "--overwrite",
    )  # fmt: skip
    outputs = {key: np.load(tmp_path / f"{key}.npy", allow_pickle=True) for key in OUTPUT_KEYS}
    expected = translator.translate_with_attention(sentences)
    assert [x.decode() for x in outputs["translation"]] == [t.translation for t in expected]
    assert [x.decode() for x in outputs["translation"]] == translator.translate(sentences)
    assert any(t.translation for t in expected)
    np.testing.assert_allclose(outputs["score"], [t.score for t in expected], rtol=1e-5)
    assert [x.decode() for x in outputs["alignment"]] == [t.alignment() for t in expected]
    for i, t in enumerate(expected):
        n, m = outputs["source_lengths"][i], outputs["target_lengths"][i]
        assert [x.decode() for x in outputs["target_tokens"][i][:m]] == t.target_tokens
        np.testing.assert_allclose(outputs["attention"][i][:m, :n], t.weights, atol=1e-5)


def test_the_serving_guide_names_the_signatures_inputs_and_outputs(writing_export):
    """docs/serving.md's "TensorFlow Serving" section names what the SavedModel holds."""
    from pathlib import Path

    _, _, loaded = writing_export
    guide = Path(__file__).resolve().parents[2] / "docs" / "serving.md"
    section = guide.read_text(encoding="utf-8").split("\n## TensorFlow Serving\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    for name, signature in loaded.signatures.items():
        assert f"`{name}`" in section, name
        for key in signature.structured_input_signature[1]:
            assert f"`{key}`" in section, (name, key)
        for key in signature.structured_outputs:
            assert f"`{key}`" in section or key in OUTPUT_KEYS, (name, key)
    assert '"instances": [' in section and '"inputs": {"sentences"' in section
    assert "/v1/models/zoo:predict" in section and "models/zoo/1" in section
