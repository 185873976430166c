/** `0–999, 1204, 2000–2999`: sorted positions as ranges, the first `max` of them. */
export function describePositions(sorted: readonly number[], max = 10): string {
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? NaN) + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return ranges.length > max ? `${ranges.slice(0, max).join(', ')}, …` : ranges.join(', ');
}
