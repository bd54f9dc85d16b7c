// The accuracy ONNX Runtime reaches with a classifier on a CSV data set
// (features then an integer label per row, plain or gzip), every row, for
// comparison with `nnplug eval`'s "on all rows" figure.
//   node accuracy.js MODEL.onnx DATA.csv[.gz] SCALE SAMPLE_SHAPE(1,8,8)
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const ort = require('onnxruntime-node');

async function main() {
  const [model, data, scaleText, shapeText] = process.argv.slice(2);
  const scale = Number(scaleText);
  const shape = shapeText.split(',').map(Number);
  const raw = fs.readFileSync(data);
  const text = (data.endsWith('.gz') ? zlib.gunzipSync(raw) : raw).toString('utf8');
  const rows = text.split('\n').filter((line) => line.trim() !== '').map((line) => line.split(',').map(Number));
  const features = shape.reduce((a, b) => a * b, 1);
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  let correct = 0;
  const batch = 64;
  for (let start = 0; start < rows.length; start += batch) {
    const chunk = rows.slice(start, start + batch);
    const x = new Float32Array(chunk.length * features);
    chunk.forEach((row, i) => { for (let j = 0; j < features; ++j) x[i * features + j] = row[j] * scale; });
    const out = await session.run({ input: new ort.Tensor('float32', x, [chunk.length, ...shape]) });
    const logits = out[session.outputNames[0]];
    const classes = logits.dims[1];
    chunk.forEach((row, i) => {
      let best = 0;
      for (let c = 1; c < classes; ++c) if (logits.data[i * classes + c] > logits.data[i * classes + best]) best = c;
      if (best === row[features]) correct += 1;
    });
  }
  process.stdout.write(`${(100 * correct / rows.length).toFixed(2)}\n`);
}

main().catch((e) => {
  process.stderr.write(`onnxruntime: ${e.message}\n`);
  process.exit(1);
});
