/** How well stated probabilities match how often they are right. */

/** One answer: the probability it was given with, and whether it was right. */
export interface ScoredAnswer {
  p: number;
  right: boolean;
}

/**
 * The lowest probability p such that the answers at or above every threshold from p up are right in
 * at least `target` of cases (ten answers at least before a precision is believed); 1 when none is.
 */
export function answerThreshold(rows: readonly ScoredAnswer[], target: number): number {
  const sorted = [...rows].sort((a, b) => b.p - a.p);
  let best = 1;
  let right = 0;
  let worstPrecision = 1;
  sorted.forEach((row, k) => {
    right += row.right ? 1 : 0;
    if (k + 1 < 10) return;
    worstPrecision = Math.min(worstPrecision, right / (k + 1));
    if (worstPrecision >= target) best = row.p;
  });
  return best;
}

/** An answer and the room it named: '' when a rule left it `unknown` whatever its probability. */
export interface NamedAnswer extends ScoredAnswer {
  room: string;
}

/**
 * A threshold per room: answerThreshold over the answers that named that room (so each room's answers
 * are right in at least `target` of cases on their own, whatever the mix of rooms), never below
 * `floor`; 1 (never named) for a room whose answers never reach `target` or are fewer than ten.
 * Answers named '' are no answers at any threshold and are left out.
 */
export function answerThresholdsByRoom(
  rows: readonly NamedAnswer[],
  rooms: readonly string[],
  target: number,
  floor: number,
): Record<string, number> {
  return Object.fromEntries(
    rooms.map((room) => {
      const own = rows.filter((row) => row.room === room);
      return [room, Math.max(floor, answerThreshold(own, target))];
    }),
  );
}

/**
 * Expected calibration error over ten equal-width bins of p: the answer-weighted mean gap between the
 * stated probability and the share right (0 for perfectly calibrated answers).
 */
export function expectedCalibrationError(rows: readonly ScoredAnswer[], bins = 10): number {
  let error = 0;
  for (let b = 0; b < bins; b++) {
    const inBin = rows.filter((r) => Math.min(bins - 1, Math.floor(r.p * bins)) === b);
    if (inBin.length === 0) continue;
    const confidence = inBin.reduce((s, r) => s + r.p, 0) / inBin.length;
    const accuracy = inBin.filter((r) => r.right).length / inBin.length;
    error += (inBin.length / rows.length) * Math.abs(confidence - accuracy);
  }
  return error;
}
