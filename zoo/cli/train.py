"""`python -m zoo train PRESET [flags]`: a preset trained by the recipes' workflow
(`zoo.workflow.preset_run`); `python -m zoo train PRESET --help` lists the flags."""

from zoo.workflow.preset_run import train_preset


def run_train(argv):
    """Trains, evaluates and writes the output folder; returns the exit status."""
    status = train_preset(argv)
    return status if isinstance(status, int) else 0
