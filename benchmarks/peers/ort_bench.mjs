// ONNX Runtime side of the peer benchmark (onnxruntime-node, CPU provider).
// Same command line and JSON lines as semroute_peer_bench:
//
//   node ort_bench.mjs --model M.onnx [--threads 2] logits --ids 1,2,3
//   node ort_bench.mjs --model M.onnx [--threads 2] time --lengths 16,64 [--reps 20] [--warmup 3] [--budget S]
//   node ort_bench.mjs --model M.onnx [--threads 2] serve
//       (stdin lines "time LENGTH REPS WARMUP [BUDGET_S]", one JSON line back each; "quit")
//
// Repetitions stop early once at least 5 ran and they took --budget seconds.
//
// --save-optimized FILE writes the graph ORT runs after its fusions.
import * as ort from 'onnxruntime-node';
import { createInterface } from 'node:readline';

function parseArgs(argv) {
  const args = { threads: 2, reps: 20, warmup: 3, budget: Infinity, lengths: [16, 64, 256, 512], mode: null };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--model') args.model = value();
    else if (flag === '--threads') args.threads = Number(value());
    else if (flag === '--reps') args.reps = Number(value());
    else if (flag === '--warmup') args.warmup = Number(value());
    else if (flag === '--budget') args.budget = Number(value());
    else if (flag === '--lengths') args.lengths = value().split(',').map(Number);
    else if (flag === '--ids') args.ids = value().split(',').map(Number);
    else if (flag === '--save-optimized') args.saveOptimized = value();
    else if (!flag.startsWith('--') && args.mode === null) args.mode = flag;
    else throw new Error(`unknown argument ${flag}`);
  }
  if (!args.model || !['logits', 'time', 'serve'].includes(args.mode))
    throw new Error('usage: ort_bench.mjs --model M.onnx [--threads N] logits --ids ... | time --lengths ... | serve');
  return args;
}

// The ids semroute_peer_bench makes for a length: a 64-bit LCG seeded by the
// length, ids in [1000, 50000).
function benchIds(length) {
  const mask = (1n << 64n) - 1n;
  let x = BigInt(length);
  const ids = new BigInt64Array(length);
  for (let i = 0; i < length; ++i) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & mask;
    ids[i] = 1000n + ((x >> 33n) % 49000n);
  }
  return ids;
}

function feeds(ids) {
  const n = ids.length;
  return {
    input_ids: new ort.Tensor('int64', ids, [1, n]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
  };
}

async function time(session, length, reps, warmup, budget) {
  const input = feeds(benchIds(length));
  for (let i = 0; i < warmup; ++i) await session.run(input);
  const ms = [];
  let total = 0;
  while (ms.length < reps && (ms.length < 5 || total < budget * 1e3)) {
    const start = process.hrtime.bigint();
    await session.run(input);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    total += ms[ms.length - 1];
  }
  ms.sort((a, b) => a - b);
  return { engine: 'ort', length, reps: ms.length, median_ms: ms[Math.floor(ms.length / 2)], min_ms: ms[0] };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  };
  if (args.saveOptimized) options.optimizedModelFilePath = args.saveOptimized;
  const session = await ort.InferenceSession.create(args.model, options);
  const print = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

  if (args.mode === 'logits') {
    const out = await session.run(feeds(BigInt64Array.from(args.ids.map(BigInt))));
    print({ engine: 'ort', logits: Array.from(out.logits.data) });
  } else if (args.mode === 'time') {
    for (const length of args.lengths) print(await time(session, length, args.reps, args.warmup, args.budget));
  } else {
    print({ engine: 'ort', ready: true, version: ort.env.versions.node, threads: args.threads });
    for await (const line of createInterface({ input: process.stdin })) {
      const [cmd, length, reps, warmup, budget] = line.trim().split(/\s+/);
      if (cmd === 'quit') break;
      if (cmd !== 'time') throw new Error(`unknown command ${line}`);
      print(await time(session, Number(length), Number(reps), Number(warmup), budget ? Number(budget) : Infinity));
    }
  }
}

main().catch((e) => {
  process.stderr.write(`ort_bench: ${e.message ?? e}\n`);
  process.exit(1);
});
