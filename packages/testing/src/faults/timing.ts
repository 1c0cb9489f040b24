export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** A uniformly random number in [lo, hi). */
export const rand = (lo: number, hi: number): number => lo + Math.random() * (hi - lo);
