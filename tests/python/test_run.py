"""sluice.run: headless training from Python gives the events and the losses that
`sluice run --json` gives for the same project, overrides as --set, errors and stops."""
import json
import subprocess

import pytest

import sluice


def training_project(folder, epochs=2):
    document = sluice.from_npy({"x": "x.npy", "y": "y.npy"}, folder=folder).global_shuffle(seed=4).batch(100).to_dict("fit")
    document["model"] = {
        "inputs": [{"name": "x", "feature": "x"}],
        "layers": [{"class_name": "Dense", "name": "d1", "units": 16, "activation": "relu"},
                   {"class_name": "Dense", "name": "d2", "units": 1}],
        "outputs": [{"name": "y", "layer": "d2", "target": "y", "loss": "mse"}]}
    document["training"] = {"epochs": epochs, "seed": 3, "optimizer": {"type": "adam", "learning_rate": 0.01},
                            "threads": 2, "checkpoint": {"every_epoch": False}}
    path = folder / "fit.sluice"
    path.write_text(json.dumps(document))
    return path


def epoch_losses(events):
    return [e["loss"] for e in events if e["event"] == "epoch_end"]


def test_events_and_losses_match_sluice_run(regression, sluice_exe):
    path = training_project(regression)
    events = []
    outcome = sluice.run(path, overrides={"training.optimizer.learning_rate": 0.02}, on_event=events.append)
    assert outcome == {"status": "ok", "steps": 40, "epochs": 2}
    cli = subprocess.run([sluice_exe, "run", str(path), "--json", "--set", "training.optimizer.learning_rate=0.02"],
                         check=True, capture_output=True, text=True)
    cli_events = [json.loads(line) for line in cli.stdout.splitlines() if line.startswith("{")]
    assert events[0]["event"] == "run_start" and events[-1]["event"] == "run_end"
    assert [e["event"] for e in events if e["event"] in ("epoch_start", "epoch_end")] == \
        [e["event"] for e in cli_events if e["event"] in ("epoch_start", "epoch_end")]
    # The same seed, data and threads: the same training, to the last bit of the losses.
    assert epoch_losses(events) == epoch_losses(cli_events)
    assert len(epoch_losses(events)) == 2
    # The override acted: another learning rate trains differently.
    other = []
    sluice.run(path, on_event=other.append)
    assert epoch_losses(other) != epoch_losses(events)


def test_bad_overrides_and_projects_raise_the_clis_messages(regression):
    path = training_project(regression)
    with pytest.raises(ValueError, match="nodes.nope"):
        sluice.run(path, overrides={"nodes.nope.batch_size": 3})
    with pytest.raises(FileNotFoundError):
        sluice.run(regression / "missing.sluice")


def test_an_exception_in_the_callback_stops_the_run(regression):
    path = training_project(regression, epochs=50)
    seen = []

    def stop_after_first_epoch(event):
        seen.append(event["event"])
        if event["event"] == "epoch_end":
            raise StopIteration("enough")

    with pytest.raises(StopIteration, match="enough"):
        sluice.run(path, on_event=stop_after_first_epoch)
    assert seen.count("epoch_end") < 50
