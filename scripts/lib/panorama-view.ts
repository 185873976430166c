/** An image as packed RGB bytes, row after row. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Where a perspective view looks, and how wide it is. */
export interface ViewSpec {
  /** Degrees clockwise from the panorama's centre column (0 looks at its middle, 90 a quarter right). */
  yawDegrees: number;
  /** Horizontal field of view in degrees (below 180). */
  hfovDegrees: number;
  width: number;
  height: number;
}

/**
 * The perspective view a level camera at the centre of an equirectangular panorama would take: a
 * pinhole with square pixels, its optical axis on the horizon at `yawDegrees`. Pixels are sampled
 * bilinearly; the panorama wraps left to right. Used to measure the analyzer on 360° captures of
 * empty homes, which are what a staging client often holds.
 */
export function perspectiveView(panorama: RgbImage, view: ViewSpec): RgbImage {
  const { width: pw, height: ph, data: source } = panorama;
  if (source.length !== pw * ph * 3) throw new Error('panorama: data is not width × height × 3 bytes');
  if (!(view.hfovDegrees > 0 && view.hfovDegrees < 180)) throw new Error('hfov must be between 0 and 180');
  const { width, height } = view;
  const focal = width / 2 / Math.tan((view.hfovDegrees * Math.PI) / 360);
  const yaw = (view.yawDegrees * Math.PI) / 180;
  const out = new Uint8Array(width * height * 3);
  for (let j = 0; j < height; j++) {
    const y = height / 2 - (j + 0.5);
    for (let i = 0; i < width; i++) {
      const x = i + 0.5 - width / 2;
      const longitude = Math.atan2(x, focal) + yaw;
      const latitude = Math.atan2(y, Math.hypot(x, focal));
      // Pixel centres: column u covers longitudes [u, u + 1) / pw of the full turn.
      const u = ((((longitude / (2 * Math.PI) + 0.5) % 1) + 1) % 1) * pw - 0.5;
      const v = Math.min(ph - 1, Math.max(0, (0.5 - latitude / Math.PI) * ph - 0.5));
      const u0 = Math.floor(u);
      const v0 = Math.min(ph - 2, Math.floor(v));
      const du = u - u0;
      const dv = Math.min(1, v - v0);
      const left = ((u0 % pw) + pw) % pw;
      const right = (left + 1) % pw;
      const at = (col: number, row: number, c: number): number => source[(row * pw + col) * 3 + c]!;
      for (let c = 0; c < 3; c++) {
        const top = at(left, v0, c) * (1 - du) + at(right, v0, c) * du;
        const bottom = at(left, v0 + 1, c) * (1 - du) + at(right, v0 + 1, c) * du;
        out[(j * width + i) * 3 + c] = Math.round(top * (1 - dv) + bottom * dv);
      }
    }
  }
  return { data: out, width, height };
}
