/** Float32 vectors as SQLite BLOBs (native byte order: the database never leaves its machine's architecture family). */

export function vectorToBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
}

/** Copies into a fresh, aligned Float32Array (a BLOB's bytes may start at any offset). */
export function blobToVector(blob: Uint8Array): Float32Array {
  const vector = new Float32Array(Math.floor(blob.byteLength / 4));
  new Uint8Array(vector.buffer).set(blob.subarray(0, vector.byteLength));
  return vector;
}
