/**
 * Running CenterNet at another input side rewrites constants the conversion froze for 512 px; these
 * tests build small graphs to check that the rewrite lands where it must, and that any graph other
 * than the one the code knows is refused with its weights untouched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as tf from '@tensorflow/tfjs';

import {
  GRAPH_SIZE_CONSTANTS,
  readPackageGraph,
  resizeGraph,
} from '../../src/analysis/model/centernet-model.ts';

const REFUSED = /the CenterNet graph is not the one whose size constants this code knows/;
const names = Object.keys(GRAPH_SIZE_CONSTANTS);

/**
 * A graph of one placeholder whose weights are a float16 tensor of 3 values (6 bytes, so the
 * constants after it are not 4-byte aligned), then `constants` (by default the size constants as
 * they are at 512 px, in order), each an int32 tensor of its values.
 */
function graphAt512(
  constants: Array<[string, number[]]> = names.map((name) => [name, GRAPH_SIZE_CONSTANTS[name]!(512)]),
) {
  const json = {
    modelTopology: { node: [{ op: 'Placeholder', attr: { shape: { shape: { dim: [] as unknown } } } }] },
    signature: { inputs: { image: { tensorShape: { dim: [] as unknown } } } },
    weightsManifest: [],
  } as unknown as tf.io.ModelJSON;
  const weightSpecs: tf.io.WeightsManifestEntry[] = [
    { name: 'conv/kernel', shape: [3], dtype: 'float32', quantization: { dtype: 'float16' } },
  ];
  for (const [name, values] of constants) weightSpecs.push({ name, shape: [values.length], dtype: 'int32' });
  const flat = constants.flatMap(([, values]) => values);
  const weights = Buffer.alloc(6 + 4 * flat.length);
  weights.write('abcdef', 0, 'latin1');
  flat.forEach((v, i) => weights.writeInt32LE(v, 6 + 4 * i));
  return { json, weightSpecs, weights };
}

const at512 = (name: string): [string, number[]] => [name, GRAPH_SIZE_CONSTANTS[name]!(512)];

const constantsIn = (weights: Buffer) =>
  Array.from({ length: (weights.length - 6) / 4 }, (_, i) => weights.readInt32LE(6 + 4 * i));

void test('a graph resized to 384 px holds the 384 px sizes and input shape, the other weights as they were', () => {
  const graph = graphAt512();
  resizeGraph(graph.json, graph.weightSpecs, graph.weights, 384);
  // Upsampling to 24, 48 and 96; a 96×96 grid of 9216 boxes of 4; rows 96 wide.
  assert.deepEqual(constantsIn(graph.weights), [24, 24, 48, 48, 96, 96, 9216, 4, 96]);
  assert.equal(graph.weights.toString('latin1', 0, 6), 'abcdef');
  const dims = [1, 384, 384, 3].map((size) => ({ size: String(size) }));
  const topology = graph.json.modelTopology as {
    node: Array<{ attr: { shape: { shape: { dim: unknown } } } }>;
  };
  assert.deepEqual(topology.node[0]!.attr.shape.shape.dim, dims);
  assert.deepEqual(
    (graph.json.signature as { inputs: { image: { tensorShape: { dim: unknown } } } }).inputs.image
      .tensorShape.dim,
    dims,
  );
});

void test('another graph is refused and left as it was', () => {
  const changes: Array<[string, (graph: ReturnType<typeof graphAt512>) => void]> = [
    ['a constant that does not hold its 512 px value', (g) => g.weights.writeInt32LE(33, 6 + 4 * 8)],
    ['a constant stored as float32', (g) => (g.weightSpecs[2]!.dtype = 'float32')],
    ['a constant missing', (g) => (g.weightSpecs[3]!.name = 'renamed')],
    [
      'weights longer than the manifest says',
      (g) => (g.weights = Buffer.concat([g.weights, Buffer.alloc(4)])),
    ],
  ];
  const graphs: Array<[string, ReturnType<typeof graphAt512>]> = changes.map(([what, change]) => {
    const graph = graphAt512();
    change(graph);
    return [what, graph];
  });
  // Built whole: one constant listed twice (with the rest all there), and a constant of one value
  // where two belong, last, so that reading two would run past the weights.
  graphs.push(['a constant twice', graphAt512([...names.map(at512), at512(names[0]!)])]);
  graphs.push([
    'a constant shorter than it must be, last',
    graphAt512([...names.slice(1).map(at512), [names[0]!, [32]]]),
  ]);
  for (const [what, graph] of graphs) {
    const before = Buffer.from(graph.weights);
    const json = JSON.stringify(graph.json);
    assert.throws(() => resizeGraph(graph.json, graph.weightSpecs, graph.weights, 384), REFUSED, what);
    assert.deepEqual(graph.weights, before, what);
    assert.equal(JSON.stringify(graph.json), json, what);
  }
});

void test('a weight quantised in a way the code cannot size is refused by name', () => {
  const graph = graphAt512();
  graph.weightSpecs[0]!.quantization = { dtype: 'int8' as 'uint8' };
  assert.throws(
    () => resizeGraph(graph.json, graph.weightSpecs, graph.weights, 384),
    /unexpected weight quantisation int8/,
  );
});

void test('the shipped graph has each size constant once, where the rewrite expects it', async () => {
  const graph = await readPackageGraph();
  assert.deepEqual(
    graph.weightSpecs
      .filter((spec) => names.includes(spec.name))
      .map((spec) => spec.name)
      .sort(),
    [...names].sort(),
  );
  resizeGraph(graph.json, graph.weightSpecs, graph.weights, 448);
  const topology = graph.json.modelTopology as {
    node: Array<{ op: string; attr: { shape: { shape: { dim: unknown } } } }>;
  };
  const input = topology.node.find((node) => node.op === 'Placeholder')!;
  assert.deepEqual(
    input.attr.shape.shape.dim,
    [1, 448, 448, 3].map((size) => ({ size: String(size) })),
  );
});
