"""The example's own tests, run from its folder once it is installed (``pip install .``
registers the entry point): ``pytest``. The conformance kit builds the data, runs it through
OpenCompass with the CPU baselines and checks what every benchmark must satisfy."""

from opencompass_lveval.framework.benchmarks import named
from opencompass_lveval.testing import check_benchmark


def test_exact_match_takes_the_first_number_of_the_reply():
    passkey = named('passkey')
    assert passkey.score_record(' The pass key is 38021.', '38021') == 100.0
    assert passkey.score_record('12 then 38021', '38021') == 0.0


def test_passkey_conforms(tmp_path):
    check_benchmark('passkey', tmp_path)
