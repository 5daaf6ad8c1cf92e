"""Models are loaded with trust_remote_code=False: a model folder whose config asks for its own
Python code (``auto_map``) is refused with a ConfigError, its code never runs and nothing
prompts."""

from __future__ import annotations

import json
import shutil

import pytest

from icda.encoder import EncoderSettings, SentenceEncoder, load_tokenizer
from icda.errors import ConfigError

CODE = "import pathlib\npathlib.Path(__file__).with_name('RAN').write_text('ran')\n{body}"


@pytest.fixture
def custom_code_folder(tiny_bert_dir, tmp_path):
    """The tiny BERT, its config and tokenizer config rewritten to ask for code of their own."""
    folder = tmp_path / "custom"
    shutil.copytree(tiny_bert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(model_type="icda-custom", auto_map={"AutoConfig": "custom_code.CustomConfig",
                                                      "AutoModel": "custom_code.CustomModel"})
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer = json.loads((folder / "tokenizer_config.json").read_text())
    tokenizer["auto_map"] = {"AutoTokenizer": ["custom_code.CustomTokenizer", None]}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    (folder / "custom_code.py").write_text(CODE.format(
        body="from transformers import BertConfig, BertModel, BertTokenizer\n"
             "class CustomConfig(BertConfig):\n    model_type = 'icda-custom'\n"
             "class CustomModel(BertModel):\n    config_class = CustomConfig\n"
             "class CustomTokenizer(BertTokenizer):\n    pass\n"))
    return folder


def settings_of(folder) -> EncoderSettings:
    return EncoderSettings(name=str(folder), pooling="mean", max_tokens=16, max_sentences=16, batch_size=8)


def test_an_encoder_that_asks_for_custom_code_is_refused(custom_code_folder, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda *a: pytest.fail("transformers prompted"))
    with pytest.raises(ConfigError) as err:
        SentenceEncoder(settings_of(custom_code_folder))
    assert str(err.value).startswith(f"encoder.name {str(custom_code_folder)!r}: its files ask for custom "
                                     "Python code (auto_map in its config), which icda does not run. Fix: use "
                                     "a model whose architecture transformers implements itself")
    assert not (custom_code_folder / "RAN").exists()


def test_a_tokenizer_that_asks_for_custom_code_gets_the_builtin_class(custom_code_folder, monkeypatch):
    """The tokenizer files (tokenizer.json, vocab) are read by transformers' own class; the
    folder's code does not run."""
    monkeypatch.setattr("builtins.input", lambda *a: pytest.fail("transformers prompted"))
    tokenizer = load_tokenizer(settings_of(custom_code_folder))
    assert type(tokenizer).__module__.startswith("transformers.")
    assert not (custom_code_folder / "RAN").exists()


def test_every_from_pretrained_passes_trust_remote_code_false():
    """No call site loads a model or tokenizer but through icda.encoder.from_pretrained."""
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "icda"
    calls = [f"{path.relative_to(package)}:{n}" for path in package.rglob("*.py")
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if ".from_pretrained(" in line and "trust_remote_code=False" not in line]
    assert calls == [], calls
