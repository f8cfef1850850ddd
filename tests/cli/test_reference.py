from __future__ import annotations

from logmine.cli.reference import DOC_PATH, render


def test_cli_reference_matches_the_code() -> None:
    # Regenerate with: python -m logmine.cli.reference
    assert DOC_PATH.read_text() == render()


def test_help_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from logmine.cli import main\n"
        "for argv in (['--help'], ['ingest', '--help'], ['compress', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'logmine_serving') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "HEAVY []"
