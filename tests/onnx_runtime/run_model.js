// Runs ONNX models with ONNX Runtime (onnxruntime-node, CPU), the outside
// client the tests compare nnplug's exports with.
//   node run_model.js MODEL.onnx THREADS INPUTS.json  -> outputs as JSON on stdout
//   node run_model.js --many MANIFEST.json THREADS     -> one result per model
// INPUTS.json: {"name": {"dims": [..], "data": [..], "dtype": "float32"|"int64"}, ...}
// (dtype defaults to float32). MANIFEST.json: [{"model": PATH, "inputs": {..}}, ..];
// each result is the model's outputs, or {"error": message} when ONNX
// Runtime refuses it, so one bad file does not hide the others.
// An input given as {"dims": [..], "random": true} is filled with seeded
// pseudo-random values in [-1, 1) (the benchmarks' large inputs). With
// BENCH=N in the environment it also times N runs after warm-up and prints
// {"median_us": ..., "max_rss_kb": ...} instead (the process's peak
// resident memory, the model's session included).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function randomFloats(count) {
  const out = new Float32Array(count);
  let state = 12345;
  for (let i = 0; i < count; ++i) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = state / 2147483648 - 1;
  }
  return out;
}

function feedsOf(given) {
  const feeds = {};
  for (const [name, t] of Object.entries(given)) {
    const count = t.dims.reduce((a, b) => a * b, 1);
    const data = t.random ? randomFloats(count)
      : t.dtype === 'int64' ? BigInt64Array.from(t.data.map(BigInt)) : Float32Array.from(t.data);
    feeds[name] = new ort.Tensor(t.dtype || 'float32', data, t.dims);
  }
  return feeds;
}

async function run(model, threads, given) {
  const options = { intraOpNumThreads: Number(threads), interOpNumThreads: 1, executionMode: 'sequential' };
  const session = await ort.InferenceSession.create(model, options);
  const feeds = feedsOf(given);
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
    return { median_us: times[Math.floor(times.length / 2)], max_rss_kb: process.resourceUsage().maxRSS };
  }
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames)
    out[name] = { dims: results[name].dims, data: Array.from(results[name].data, Number) };
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--many') {
    const manifest = JSON.parse(fs.readFileSync(args[1], 'utf8'));
    const all = [];
    for (const entry of manifest) {
      try {
        all.push(await run(entry.model, args[2], entry.inputs));
      } catch (e) {
        all.push({ error: e.message });
      }
    }
    process.stdout.write(JSON.stringify(all) + '\n');
    return;
  }
  const [model, threads, inputsPath] = args;
  const result = await run(model, threads, JSON.parse(fs.readFileSync(inputsPath, 'utf8')));
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  process.stderr.write(`onnxruntime: ${e.message}\n`);
  process.exit(1);
});
