// Runs an ONNX model with ONNX Runtime (onnxruntime-node, CPU), the outside
// client the tests compare nnplug's exports with.
//   node run_model.js MODEL.onnx THREADS INPUTS.json  -> outputs as JSON on stdout
// INPUTS.json: {"name": {"dims": [..], "data": [..]}, ...} (float32 data).
// With BENCH=N in the environment it also times N runs after warm-up and
// prints {"median_us": ...} for each input set instead.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads, inputsPath] = process.argv.slice(2);
  const options = { intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential' };
  const session = await ort.InferenceSession.create(model, options);
  const given = JSON.parse(fs.readFileSync(inputsPath, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(given)) feeds[name] = new ort.Tensor('float32', Float32Array.from(t.data), t.dims);
  const bench = Number(process.env.BENCH || 0);
  if (bench > 0) {
    for (let i = 0; i < 5; ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < bench; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    times.sort((a, b) => a - b);
    process.stdout.write(JSON.stringify({ median_us: times[Math.floor(times.length / 2)] }) + '\n');
    return;
  }
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) out[name] = { dims: results[name].dims, data: Array.from(results[name].data) };
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`onnxruntime: ${e.message}\n`);
  process.exit(1);
});
