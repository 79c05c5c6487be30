// The latency histogram of a usage rollup (migration 2026-11-25T0500): LATENCY_BUCKETS log-scale
// buckets of an LLM call's duration, bucket i holding [2^(i/4), 2^((i+1)/4)) µs (bucket 0 also
// below 1 µs, the last everything from 2^31.75 µs, 58 min). The write path fills it; usage reads it.

export const LATENCY_BUCKETS = 128

/** The latency bucket of a duration (the migration's formula). */
export function latencyBucket(durationNs: number): number {
  const micros = durationNs / 1000
  if (micros < 1) return 0
  return Math.min(LATENCY_BUCKETS - 1, Math.floor((4 * Math.log(micros)) / Math.LN2))
}

/** The duration, in ms, a bucket stands for: its geometric middle, within 9.1% of any duration in it. */
export function latencyBucketMs(bucket: number): number {
  return 2 ** ((bucket + 0.5) / 4) / 1000
}
