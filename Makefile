# The README's two set-up commands: `make demo` and `make test`. Both create .venv and
# install what they need, so they work on a fresh clone with only Python present.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,demo,onednn]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/figure1_mlp.py

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	TW_PYTHON=$(abspath $(PY)) ../shared/bench/side_by_side.sh
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) benchmarks/executor_raw.py benchmarks/out/extra_executor.json
	$(PY) benchmarks/build_time_variants.py benchmarks/out/extra_build.json
	$(PY) benchmarks/input_pipeline.py benchmarks/out/extra_pipeline.json
	$(PY) benchmarks/parallel_iterations.py benchmarks/out/extra_parallel_iterations.json
	$(PY) benchmarks/devices.py benchmarks/out/extra_devices.json
	$(PY) benchmarks/distributed_loop.py benchmarks/out/extra_distributed_loop.json
	$(PY) benchmarks/distributed.py benchmarks/out/extra_distributed.json
	$(PY) benchmarks/parallel_iterations_devices.py benchmarks/out/extra_parallel_iterations_devices.json
	$(PY) benchmarks/tagged_loop.py benchmarks/out/extra_tagged_loop.json
	$(PY) benchmarks/kernels_conv3d_multinomial.py benchmarks/out/extra_kernels_conv3d_multinomial.json
	$(PY) benchmarks/cnn_blocks.py benchmarks/out/extra_cnn_blocks.json
	$(PY) benchmarks/cnn_program.py benchmarks/out/extra_cnn_program.json
	$(PY) benchmarks/dense_programs.py benchmarks/out/extra_dense_programs.json
	$(PY) benchmarks/import_time.py benchmarks/out/extra_import_time.json
	$(PY) benchmarks/string_linalg_kernels.py benchmarks/out/extra_string_linalg_kernels.json
	$(PY) benchmarks/small_kernels.py benchmarks/out/extra_small_kernels.json
	$(PY) benchmarks/parse_example.py benchmarks/out/extra_parse_example.json
	$(PY) benchmarks/random_ops.py benchmarks/out/extra_random_ops.json
	$(PY) benchmarks/data_pipeline.py benchmarks/out/extra_data_pipeline.json
	$(PY) benchmarks/image_map_fn.py benchmarks/out/extra_image_map_fn.json
	$(PY) benchmarks/feature_columns.py benchmarks/out/extra_feature_columns.json
	$(PY) benchmarks/lm_softmax.py benchmarks/out/extra_lm_softmax.json
	$(PY) benchmarks/embedding_step.py benchmarks/out/extra_embedding.json --ps
	$(PY) benchmarks/sync_replicas.py --json benchmarks/out/extra_sync_replicas.json
	$(PY) benchmarks/deterministic_cost.py
	$(PY) benchmarks/plot_figures.py benchmarks/out
	$${TF_PYTHON:-$$HOME/.cache/tensorweave-bench-tf/bin/python} benchmarks/api_coverage.py \
		dump benchmarks/out/tf_v1_names.json
	$(PY) benchmarks/api_coverage.py check benchmarks/out/tf_v1_names.json \
		benchmarks/out/extra_api_coverage.json
	$(PY) benchmarks/results.py benchmarks/out benchmarks/out/extra_executor.json \
		benchmarks/out/extra_build.json benchmarks/out/extra_pipeline.json \
		benchmarks/out/extra_parallel_iterations.json benchmarks/out/extra_api_coverage.json \
		benchmarks/out/extra_devices.json benchmarks/out/extra_distributed_loop.json \
		benchmarks/out/extra_parallel_iterations_devices.json benchmarks/out/extra_distributed.json \
		benchmarks/out/extra_tagged_loop.json benchmarks/out/extra_lm_softmax.json \
		benchmarks/out/extra_embedding.json

clean:
	rm -rf $(VENV) benchmarks/out
