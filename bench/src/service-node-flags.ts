/**
 * The Node flags the services run with (the npm start scripts and the image's NODE_OPTIONS):
 * every server a benchmark starts, ceilings included, gets the same, so ratios compare like
 * with like and peak RSS is what an operator would see.
 */
export const serviceNodeFlags = ['--max-semi-space-size=8', '--heap-growing-percent=50']
