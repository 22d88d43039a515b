"""Rules train_ehi / train_de: one training run (ehi.train.job), run as a command so that
``python -m torch.distributed.run`` can start it once a rank when a job has several GPUs."""

from ehi.core.kernels import pin_kernels  # first: the CPU kernels are pinned before torch loads

pin_kernels()

import logging  # noqa: E402

from ehi.core.errors import report_uncaught  # noqa: E402
from ehi.train.job import main, parse_args  # noqa: E402

if __name__ == "__main__":
    report_uncaught(logging.getLogger("train"))  # bad input: one line in the rule's log, no traceback
    main(parse_args())
