"""Rules train_ehi / train_de: one training run (ehi.train.job), run as a command so that
``python -m torch.distributed.run`` can start it once a rank when a job has several GPUs; the job
pins the CPU kernels before torch loads."""

import logging

from ehi.core.errors import report_uncaught
from ehi.train.job import main, parse_args

if __name__ == "__main__":
    report_uncaught(logging.getLogger("train"))  # bad input: one line in the rule's log, no traceback
    main(parse_args())
