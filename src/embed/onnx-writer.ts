/**
 * Writes small ONNX models without Python or a protobuf library: just enough of the ONNX protobuf
 * schema (onnx.proto3: ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto) to describe
 * a graph of standard operators with float/int64 initializers. Tests and benchmarks use it to build
 * stand-ins for real models offline (an embedding table behind the same inputs and outputs as a
 * sentence-transformer export); nothing in the daemon writes models.
 */

/** ONNX TensorProto.DataType values used here. */
export const ONNX_TYPES = { float: 1, int32: 6, int64: 7 } as const;
export type OnnxElementType = keyof typeof ONNX_TYPES;

/** A graph input or output: name, element type and shape (numbers fixed, strings symbolic). */
export interface OnnxValueInfo {
  name: string;
  type: OnnxElementType;
  /** Undefined: the shape is not declared (known only when the model runs). */
  shape: ReadonlyArray<number | string> | undefined;
}

/** A constant tensor stored in the model. */
export interface OnnxInitializer {
  name: string;
  type: 'float' | 'int64';
  dims: readonly number[];
  values: Float32Array | readonly number[];
}

export type OnnxAttribute = { name: string; int: number } | { name: string; ints: readonly number[] } | { name: string; float: number };

export interface OnnxNode {
  op: string;
  inputs: readonly string[];
  outputs: readonly string[];
  attributes?: readonly OnnxAttribute[];
}

export interface OnnxGraph {
  name: string;
  inputs: readonly OnnxValueInfo[];
  outputs: readonly OnnxValueInfo[];
  initializers: readonly OnnxInitializer[];
  nodes: readonly OnnxNode[];
  /** Default opset 13 (ReduceMean still takes `axes` as an attribute there). */
  opset?: number;
}

/** Serialises a graph into ONNX model bytes (IR version 8). */
export function writeOnnxModel(graph: OnnxGraph): Uint8Array {
  const opset = new ProtoWriter().string(1, '').varint(2, graph.opset ?? 13);
  const body = new ProtoWriter();
  graph.nodes.forEach((node, i) => {
    body.message(1, nodeProto(node, i));
  });
  body.string(2, graph.name);
  for (const init of graph.initializers) body.message(5, tensorProto(init));
  for (const input of graph.inputs) body.message(11, valueInfo(input));
  for (const output of graph.outputs) body.message(12, valueInfo(output));
  return new ProtoWriter().varint(1, 8).string(2, 'homeagent-onnx-writer').message(7, body).message(8, opset).bytes();
}

function nodeProto(node: OnnxNode, index: number): ProtoWriter {
  const w = new ProtoWriter();
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  w.string(3, `${node.op.toLowerCase()}_${index}`).string(4, node.op);
  for (const attribute of node.attributes ?? []) {
    const a = new ProtoWriter().string(1, attribute.name);
    // AttributeProto.type: FLOAT = 1, INT = 2, INTS = 7.
    if ('int' in attribute) a.varint(3, attribute.int).varint(20, 2);
    else if ('float' in attribute) a.float(2, attribute.float).varint(20, 1);
    else {
      for (const v of attribute.ints) a.varint(8, v);
      a.varint(20, 7);
    }
    w.message(5, a);
  }
  return w;
}

function tensorProto(init: OnnxInitializer): ProtoWriter {
  const w = new ProtoWriter();
  for (const d of init.dims) w.varint(1, d);
  w.varint(2, ONNX_TYPES[init.type]).string(8, init.name);
  const count = init.dims.reduce((a, b) => a * b, 1);
  if (init.values.length !== count) throw new RangeError(`initializer ${init.name}: ${init.values.length} values for dims ${init.dims}`);
  // raw_data is little-endian, which is what ONNX requires whatever the host order.
  const raw = new DataView(new ArrayBuffer(count * (init.type === 'float' ? 4 : 8)));
  for (let i = 0; i < count; i++) {
    const v = init.values[i] as number;
    if (init.type === 'float') raw.setFloat32(i * 4, v, true);
    else raw.setBigInt64(i * 8, BigInt(v), true);
  }
  return w.raw(9, new Uint8Array(raw.buffer));
}

function valueInfo(info: OnnxValueInfo): ProtoWriter {
  const tensor = new ProtoWriter().varint(1, ONNX_TYPES[info.type]);
  if (info.shape) {
    const shape = new ProtoWriter();
    for (const d of info.shape) shape.message(1, typeof d === 'number' ? new ProtoWriter().varint(1, d) : new ProtoWriter().string(2, d));
    tensor.message(2, shape);
  }
  return new ProtoWriter().string(1, info.name).message(2, new ProtoWriter().message(1, tensor));
}

/** Protobuf wire format: varints (type 0), fixed 32-bit (type 5) and length-delimited (type 2). */
class ProtoWriter {
  readonly #chunks: Uint8Array[] = [];

  varint(field: number, value: number): this {
    this.#key(field, 0);
    this.#varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.#key(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.#chunks.push(b);
    return this;
  }

  string(field: number, value: string): this {
    return this.raw(field, new TextEncoder().encode(value));
  }

  message(field: number, value: ProtoWriter): this {
    return this.raw(field, value.bytes());
  }

  raw(field: number, value: Uint8Array): this {
    this.#key(field, 2);
    this.#varint(value.length);
    this.#chunks.push(value);
    return this;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.#chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }

  #key(field: number, wireType: number): void {
    this.#varint(field * 8 + wireType);
  }

  #varint(value: number): void {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint ${value}: only non-negative safe integers are written`);
    const out: number[] = [];
    let v = value;
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
    this.#chunks.push(Uint8Array.from(out));
  }
}
