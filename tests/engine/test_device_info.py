"""The device text comes from llama.cpp's load log; parsing it is a pure function."""

from __future__ import annotations

from atomicchat.engine.device_info import describe, offloaded_layers

LOG = [
    "load_tensors: loading model tensors, this can take a while... (mmap = true)",
    "load_tensors: offloading 32 repeating layers to GPU",
    "load_tensors: offloaded 33/33 layers to GPU",
]


def test_offloaded_layers_last_report_wins():
    assert offloaded_layers(LOG) == 33
    assert offloaded_layers(LOG + ["load_tensors: offloaded 10/33 layers to GPU"]) == 10
    assert offloaded_layers(["nothing here"]) == 0


def test_describe_each_case():
    assert describe(LOG, True, -1, 32).text == "GPU (33/33 layers)"
    assert describe(LOG, True, -1, 32).gpu_layers_used == 33
    assert describe([], True, -1, 32).text == "CPU (no GPU layers were offloaded)"
    assert describe(LOG, True, 0, 32).text == "CPU (GPU layers set to 0)"
    cpu_only = describe([], False, -1, 32)
    assert cpu_only.text == "CPU" and cpu_only.gpu_layers_used == 0
    assert "no GPU backend" in cpu_only.notes[0]
    assert describe([], False, 0, 32).notes == ()
