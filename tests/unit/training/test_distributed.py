"""Data-parallel training: two CPU processes (gloo) take the same steps as one process that
trains on the whole of every batch; a rank's share of a batch and of its links."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from safetensors.torch import load_file, save_file

from attnviz.cli.main import main
from attnviz.store.checkpoint import read_header, read_history
from attnviz.training import distributed
from attnviz.training.batches import make_batches
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from tests.support.paths import ROOT
from tests.support.tiny import reverse_corpus, tiny_translator

PAIRS = 41  # batches of 8 rows and one of 1: a rank gets no row of that one
CFG = {"epochs": 2, "batch_size": 8, "lr": 1e-2, "patience": None, "seed": 0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank(rank: int, world: int, port: int, out: str) -> None:
    """One torchrun-like process: the environment torchrun sets, then the same fit as below."""
    os.environ.update(
        RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    torch.set_num_threads(1)
    corpus = reverse_corpus(PAIRS)
    translator = tiny_translator(corpus)  # dropout 0: the masks would differ between ranks
    reports = []
    with distributed.join_torchrun("cpu") as group:
        result = fit(translator, corpus, TrainConfig(**CFG), callback=reports.append, group=group)
    save_file({k: v.contiguous() for k, v in translator.model.state_dict().items()}, f"{out}/rank{rank}.safetensors")
    steps = None if translator.history is None else [p["step"] for p in translator.history.points]
    record = {
        "history": result.history,
        "reports": len(reports),
        "hardware": translator.meta["hardware"],
        "alignment_steps": steps,
    }
    Path(f"{out}/rank{rank}.json").write_text(json.dumps(record))


@pytest.mark.slow
def test_two_processes_train_like_one_on_the_whole_batch(tmp_path):
    mp.spawn(_rank, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)

    corpus = reverse_corpus(PAIRS)
    single = tiny_translator(corpus)
    result = fit(single, corpus, TrainConfig(**CFG))

    ranks = [load_file(tmp_path / f"rank{r}.safetensors") for r in (0, 1)]
    for name, expected in single.model.state_dict().items():
        assert torch.equal(ranks[0][name], ranks[1][name]), name  # DDP keeps the replicas identical
        assert torch.allclose(ranks[0][name], expected, atol=2e-5, rtol=1e-4), name
    main_record, other = (json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1))
    for mine, theirs in zip(main_record["history"], result.history, strict=True):
        # training statistics are of the whole batch, validation is summed over both ranks' parts
        for key in ("loss", "accuracy", "valid_loss", "valid_accuracy"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-4), key
    assert main_record["reports"] > 0 and other["reports"] == 0  # rank 0 alone reports
    # rank 0 alone records the alignment history, at the steps a single process records it
    assert other["alignment_steps"] is None
    assert main_record["alignment_steps"] == [p["step"] for p in single.history.points]
    assert main_record["hardware"].endswith("x 2 processes (gloo)")


def test_a_rank_without_rows_gets_a_row_without_targets():
    class Second(distributed.DDPGroup):
        def __init__(self):
            self.rank, self.world = 1, 2

    src, lengths = torch.tensor([[5, 6, 3], [7, 3, 0]]), torch.tensor([3, 2])  # <eos> = 3, <pad> = 0
    tgt = torch.tensor([[2, 8, 9, 3], [2, 4, 3, 0]])  # <bos> = 2
    (s, n, t), weight = Second().shard((src, lengths, tgt))
    assert s.tolist() == [[7, 3]] and n.tolist() == [2] and t.tolist() == [[2, 4, 3]]  # row 1, no padding column
    assert weight == pytest.approx(2 * 2 / 5)  # 2 of the batch's 5 target tokens, times 2 ranks
    (_, _, t), weight = Second().shard((src[:1], lengths[:1], tgt[:1]))
    assert weight == 0 and t[0, 0] == 2 and (t[:, 1:] == 0).all()  # targets all padding: nothing scored


def test_distributed_outside_torchrun_is_a_one_line_error(capsys):
    assert main(["train", "--data", "copy", "--distributed", "--max-steps", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "torchrun --nproc_per_node" in err


@pytest.mark.slow
def test_torchrun_trains_a_recipe_and_rank_0_saves_it(tmp_path):
    recipe = {
        "name": "copy",
        "data": "copy",
        "data_options": {"n_train": 64, "n_valid": 16, "n_test": 8},
        "model": {"emb_dim": 8, "hidden_dim": 16, "attn_dim": 8},
        "train": {"epochs": 2, "batch_size": 16},
    }
    (tmp_path / "copy.json").write_text(json.dumps(recipe))
    out = tmp_path / "copy.safetensors"
    port = str(_free_port())
    launch = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", port]
    train = ["-m", "attnviz", "train", "--recipe", str(tmp_path / "copy.json"), "--distributed", "--quiet", "--json"]
    cmd = [*launch, *train, "--out", str(out)]
    # torchrun leaves a torchelastic_* folder in TMPDIR: the test's own
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(out)  # one summary: rank 0's
    meta = read_header(out)["meta"]
    assert meta["hardware"].endswith("x 2 processes (gloo)") and meta["device"] == "cpu"
    assert len(meta["history"]) == 2 and meta["metrics"]["n"] == 8
    history = read_history(out)  # rank 0 recorded it and saved it with the weights
    assert history is not None and history["points"][0]["kind"] == "start"


def test_a_rank_shards_the_links_with_its_rows():
    second = object.__new__(distributed.DDPGroup)  # rank 1 of 2, without a process group
    second.rank, second.world = 1, 2
    corpus = reverse_corpus(3)
    [(src, lengths, tgt, grid)] = make_batches(corpus.train[1:], *corpus.build_vocabs(), 2, None, [[(0, 0)], [(1, 2)]])
    (s, _, t, g), _ = second.shard((src, lengths, tgt, grid))
    assert g.shape == (1, t.size(1) - 1, s.size(1)) and torch.equal(g[0], grid[1, : t.size(1) - 1, : s.size(1)])
    (_, _, _, g), weight = second.shard((src[:1], lengths[:1], tgt[:1], grid[:1]))
    assert weight == 0 and not g.any()  # a rank without rows: no links either
