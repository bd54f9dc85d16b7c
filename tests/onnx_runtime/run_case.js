// Runs one case of ONNX's backend test suite with ONNX Runtime (CPU), for
// tests/onnx_suite/onnx_case (--runtime ort), which reads the case's .pb
// files and compares the outputs:
//   node run_case.js REQUEST.json
// REQUEST: {"model": PATH, "folder": SCRATCH, "inputs": [{"name", "elem_type", "dims", "file"}]}
// with each input's raw little-endian bytes in its file. Prints
// {"outputs": [{"name", "elem_type", "dims", "file"}]} (each output's bytes
// written into the folder) or {"stage": "load"|"run", "error": message}.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// ONNX's element types as ONNX Runtime's JavaScript tensor types.
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};
const ELEM_OF = Object.fromEntries(Object.entries(TYPES).map(([elem, [name]]) => [name, Number(elem)]));

function tensorOf(input) {
  const type = TYPES[input.elem_type];
  if (!type) throw new Error(`input ${input.name}: element type ${input.elem_type} is not run here`);
  const bytes = fs.readFileSync(input.file);
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  const data = new type[1](copy);
  return new ort.Tensor(type[0], data, input.dims);
}

async function main() {
  const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let session;
  try {
    session = await ort.InferenceSession.create(request.model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (e) {
    return { stage: 'load', error: String(e.message || e) };
  }
  let results;
  try {
    const feeds = {};
    for (const input of request.inputs) feeds[input.name] = tensorOf(input);
    results = await session.run(feeds);
  } catch (e) {
    return { stage: 'run', error: String(e.message || e) };
  }
  const outputs = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (!(t.type in ELEM_OF)) throw new Error(`output ${name} is of type ${t.type}`);
    const file = path.join(request.folder, `out_${i}.bin`);
    const data = t.type === 'bool' ? Uint8Array.from(t.data, Number) : t.data;
    fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    outputs.push({ name, elem_type: ELEM_OF[t.type], dims: t.dims, file });
  });
  return { outputs };
}

main().then(
  (answer) => process.stdout.write(JSON.stringify(answer)),
  (e) => process.stdout.write(JSON.stringify({ stage: 'run', error: String(e.message || e) })),
);
