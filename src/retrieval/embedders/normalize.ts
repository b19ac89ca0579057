/** In-place L2 normalisation; a zero or non-finite vector is an error, never passed on. */
export function l2Normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let k = 0; k < v.length; k++) sum += v[k] * v[k];
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) throw new Error('cannot normalise a zero or non-finite vector');
  for (let k = 0; k < v.length; k++) v[k] /= norm;
  return v;
}
