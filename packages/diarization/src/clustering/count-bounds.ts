/** The `speakers` request option: `true` estimates, a number is exact, a range clamps the estimate. */
export type SpeakersOption = true | number | { min: number; max: number };

/** Inclusive bounds on the number of speakers; `min === max` forces an exact count. */
export interface CountBounds {
  min: number;
  max: number;
}

/** The API accepts 1 to 20 speakers (api-spec, create rules). */
export const MAX_SPEAKERS = 20;

export function countBounds(option: SpeakersOption): CountBounds {
  if (option === true) return { min: 1, max: MAX_SPEAKERS };
  if (typeof option === 'number') {
    check(option);
    return { min: option, max: option };
  }
  check(option.min);
  check(option.max);
  if (option.min > option.max) throw new RangeError(`speakers: min ${option.min} is above max ${option.max}`);
  return { min: option.min, max: option.max };
}

/** The estimate moved into the bounds. */
export function clampCount(estimate: number, bounds: CountBounds): number {
  return Math.min(bounds.max, Math.max(bounds.min, estimate));
}

function check(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_SPEAKERS) {
    throw new RangeError(`speakers: expected an integer 1 to ${MAX_SPEAKERS}, got ${n}`);
  }
}
