#!/usr/bin/env bash
# For the next session (~8 min): what run103 did not reach.
# (1) Model 37 whisper_encoder under the forward rule of session 54 (1%
# margin, each side's spread from its second-fastest run), now also the
# replay's rule (run102: replay 20.55 ms dropped at 2.8% faster than the
# rewritten eager 21.14, then the original 21.44 ran): predicted replayed,
# ~20.6 ms, ~1.04x eager. Model 29 timm levit_128 (never measured).
# (2) A fresh seed (2 tasks).
# (3) Same-row softmax statistics from the held row (session 54, not run):
# fixtures row_softmax_norm, anchor_softmax_twice and
# softmax_twice_short_rows through kb-verify,
# predicted all accepted (the statistics' bits unchanged); seed 20261313
# task 2 now one region, predicted ~0.072 ms (run102: merged with
# statistics from memory 0.124; split 0.070 + 0.048), the task ~0.175 ms
# (0.221 split; compile 0.155).
set -uo pipefail
source bench/next-gpu/prepare.sh
# The slice first (run103's models were cut by its deadline), leaving
# ~210 s for (3).
timed_slice slice104 20261316 2 37,29 $(( ${DEADLINE:-540} - 210 ))
verify_fixtures verify104 80 8 test/fixtures/graphs/torch-1.13/row_softmax_norm.* test/fixtures/graphs/torch-1.13/anchor_softmax_twice.* test/fixtures/graphs/torch-1.13/softmax_twice_short_rows.*
timed_tasks sel104 120 110 20261313:2
forward_choices /tmp/slice104.json
(cd $OUT && tar czf logs104.tgz *.log)
