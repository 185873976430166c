import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import sharp from 'sharp';

import type { ManifestEntry } from './manifest.ts';
import { seededRandom } from './training-data.ts';

type Rgb = readonly [number, number, number];
interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

const PASTELS: Rgb[] = [
  [250, 215, 215],
  [215, 235, 250],
  [225, 245, 215],
  [250, 240, 200],
  [235, 225, 250],
  [250, 200, 170],
];
const STRONG: Rgb[] = [
  [240, 160, 110],
  [120, 200, 190],
  [250, 240, 150],
  [245, 190, 220],
  [120, 150, 200],
  [140, 180, 90],
  [110, 110, 110],
  [230, 120, 110],
  [90, 110, 80],
];
const INKS: Rgb[] = [
  [0, 0, 0],
  [40, 40, 40],
  [70, 70, 90],
  [0, 150, 60],
  [150, 60, 160],
  [200, 50, 50],
];

class Canvas {
  readonly data: Uint8Array;
  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb,
  ) {
    this.data = new Uint8Array(width * height * 3);
    this.fill({ x: 0, y: 0, w: width, h: height }, background);
  }

  fill(r: Rect, colour: Rgb): void {
    const x0 = Math.max(0, Math.round(r.x));
    const y0 = Math.max(0, Math.round(r.y));
    const x1 = Math.min(this.width, Math.round(r.x + r.w));
    const y1 = Math.min(this.height, Math.round(r.y + r.h));
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) this.data.set(colour, (y * this.width + x) * 3);
    }
  }

  stroke(r: Rect, t: number, colour: Rgb): void {
    this.fill({ x: r.x, y: r.y, w: r.w, h: t }, colour);
    this.fill({ x: r.x, y: r.y + r.h - t, w: r.w, h: t }, colour);
    this.fill({ x: r.x, y: r.y, w: t, h: r.h }, colour);
    this.fill({ x: r.x + r.w - t, y: r.y, w: t, h: r.h }, colour);
  }

  arc(cx: number, cy: number, radius: number, from: number, sweep: number, colour: Rgb): void {
    for (let a = 0; a <= sweep; a += 0.5) {
      const t = ((from + a) * Math.PI) / 180;
      this.fill({ x: cx + radius * Math.cos(t), y: cy + radius * Math.sin(t), w: 1, h: 1 }, colour);
    }
  }

  /** Text stand-in: a row of short bars of glyph height. */
  text(x: number, y: number, chars: number, size: number, colour: Rgb, random: () => number): void {
    let cx = x;
    for (let i = 0; i < chars; i++) {
      const w = size * (0.3 + 0.4 * random());
      this.fill({ x: cx, y, w, h: size }, colour);
      cx += w + size * 0.25;
    }
  }
}

function split(room: Rect, depth: number, random: () => number): Rect[] {
  if (depth === 0 || Math.min(room.w, room.h) < 60) return [room];
  const vertical = room.w > room.h ? random() < 0.8 : random() < 0.2;
  const at = 0.3 + 0.4 * random();
  const parts: [Rect, Rect] = vertical
    ? [
        { ...room, w: room.w * at },
        { ...room, x: room.x + room.w * at, w: room.w * (1 - at) },
      ]
    : [
        { ...room, h: room.h * at },
        { ...room, y: room.y + room.h * at, h: room.h * (1 - at) },
      ];
  return [...split(parts[0], depth - 1, random), ...split(parts[1], depth - 1, random)];
}

/**
 * Draws a floor-plan-like picture: a plan (walls, room fills in pastel or strong colours or none,
 * doors with swing arcs, furniture outlines, labels, dimension lines), sometimes inside a chart figure
 * (title, axes, legend) as dataset figures are, sometimes scanned (noise, blur). For training the
 * classifier's floor_plan class and testing the drawing detector; the same seed gives the same picture.
 */
export async function drawSyntheticFloorPlan(seed: number, format: 'png' | 'jpeg' = 'jpeg'): Promise<Buffer> {
  const random = seededRandom(seed);
  const chance = (p: number): boolean => random() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const width = 320 + Math.floor(random() * 800);
  const height = Math.round(width * (0.55 + 0.7 * random()));
  const dark = chance(0.08);
  const paper: Rgb = dark
    ? [10, 10, 20]
    : pick<Rgb>([
        [255, 255, 255],
        [255, 255, 255],
        [246, 246, 246],
        [250, 247, 238],
      ]);
  const canvas = new Canvas(width, height, paper);
  const ink: Rgb = dark ? [235, 235, 235] : pick(INKS.slice(0, chance(0.7) ? 3 : INKS.length));

  let plot: Rect = { x: 0, y: 0, w: width, h: height };
  const figure = chance(0.5) && !dark;
  if (figure) {
    // A chart figure: title, axes with ticks, optional grey plot area and a legend on the right.
    const legend = chance(0.5);
    plot = { x: width * 0.1, y: height * 0.12, w: width * (legend ? 0.6 : 0.82), h: height * 0.78 };
    canvas.text(
      width * 0.35,
      height * 0.03,
      6 + Math.floor(random() * 10),
      Math.max(6, height * 0.025),
      ink,
      random,
    );
    if (chance(0.5)) canvas.fill(plot, [225, 225, 225]);
    else canvas.stroke(plot, 1, ink);
    for (let i = 0; i <= 6; i++) {
      canvas.fill({ x: plot.x + (plot.w * i) / 6, y: plot.y + plot.h, w: 1, h: 5 }, ink);
      canvas.text(plot.x + (plot.w * i) / 6 - 6, plot.y + plot.h + 8, 3, 6, ink, random);
      canvas.fill({ x: plot.x - 5, y: plot.y + (plot.h * i) / 6, w: 5, h: 1 }, ink);
      canvas.text(plot.x - 28, plot.y + (plot.h * i) / 6 - 3, 3, 6, ink, random);
    }
    if (legend) {
      for (let i = 0; i < 4 + Math.floor(random() * 8); i++) {
        const y = plot.y + i * height * 0.07;
        canvas.fill({ x: width * 0.74, y, w: 14, h: Math.max(8, height * 0.05) }, pick(STRONG));
        canvas.text(width * 0.74 + 20, y + 3, 5 + Math.floor(random() * 6), 8, ink, random);
      }
    }
  }

  const margin = 0.06 + 0.1 * random();
  const outline: Rect = {
    x: plot.x + plot.w * margin,
    y: plot.y + plot.h * margin,
    w: plot.w * (1 - 2 * margin),
    h: plot.h * (1 - 2 * margin),
  };
  const rooms = split(outline, 2 + Math.floor(random() * 3), random);
  const fills = dark ? 'none' : pick(['none', 'none', 'pastel', 'strong']);
  const wall = chance(0.3) ? 1 : 2 + Math.floor(random() * 6);
  const background = figure && chance(0.5) ? paper : null;
  for (const [i, room] of rooms.entries()) {
    // Cutting a corner room out makes an L-shaped outline.
    if (i === 0 && background && chance(0.4)) {
      canvas.fill(room, background);
      continue;
    }
    if (fills !== 'none') canvas.fill(room, pick(fills === 'pastel' ? PASTELS : STRONG));
    canvas.stroke(room, Math.max(1, Math.round(wall / 2)), ink);
    if (chance(0.7))
      canvas.text(
        room.x + room.w / 2 - 15,
        room.y + room.h / 2,
        3 + Math.floor(random() * 5),
        5,
        ink,
        random,
      );
    if (chance(0.5) && room.w > 50 && room.h > 50) {
      // Furniture outline: a bed/table rectangle or a round table.
      const fx = room.x + room.w * (0.2 + 0.3 * random());
      const fy = room.y + room.h * (0.2 + 0.3 * random());
      if (chance(0.5)) canvas.stroke({ x: fx, y: fy, w: room.w * 0.3, h: room.h * 0.25 }, 1, ink);
      else canvas.arc(fx + 10, fy + 10, Math.min(room.w, room.h) * 0.12, 0, 360, ink);
    }
    if (room.w > 60) {
      const door = Math.min(room.w * 0.4, 18 + random() * 16);
      const dx = room.x + 8 + random() * (room.w - door - 16);
      canvas.fill(
        { x: dx, y: room.y + room.h - wall, w: door, h: wall },
        fills === 'none' ? paper : pick(PASTELS),
      );
      canvas.arc(dx, room.y + room.h, door, 270, 90, ink);
    }
  }
  canvas.stroke(outline, wall, ink);
  if (chance(0.6)) {
    canvas.fill({ x: outline.x, y: outline.y - 12, w: outline.w, h: 1 }, ink);
    for (const x of [outline.x, outline.x + outline.w / 2, outline.x + outline.w - 1]) {
      canvas.fill({ x, y: outline.y - 16, w: 1, h: 9 }, ink);
    }
    canvas.text(outline.x + outline.w / 4, outline.y - 24, 4, 7, ink, random);
  }
  if (chance(0.2)) {
    // Annotation markers scattered on the walls, as in dataset figures.
    for (let i = 0; i < 40; i++) {
      const r = pick(rooms);
      canvas.fill(
        { x: r.x + (chance(0.5) ? 0 : r.w) - 3, y: r.y + random() * r.h, w: 6, h: 6 },
        pick(STRONG),
      );
    }
  }

  let image = sharp(canvas.data, { raw: { width, height, channels: 3 } });
  if (chance(0.25)) {
    // A scan: paper grain and a slight blur.
    const noisy = Uint8Array.from(canvas.data, (v) =>
      Math.max(0, Math.min(255, v + Math.round((random() - 0.5) * 16))),
    );
    image = sharp(noisy, { raw: { width, height, channels: 3 } }).blur(0.6);
  }
  return format === 'png'
    ? image.png().toBuffer()
    : image.jpeg({ quality: 60 + Math.floor(random() * 35) }).toBuffer();
}

/**
 * Writes `count` synthetic plans under `dir` (kept if already there, so cached features stay valid)
 * and returns them as manifest entries labelled floor_plan.
 */
export async function writeSyntheticFloorPlans(
  dir: string,
  count: number,
  seed: number,
): Promise<ManifestEntry[]> {
  await mkdir(dir, { recursive: true });
  const entries: ManifestEntry[] = [];
  for (let i = 0; i < count; i++) {
    const file = `plan-${seed}-${String(i).padStart(4, '0')}.${i % 5 === 0 ? 'png' : 'jpg'}`;
    const absolutePath = path.join(dir, file);
    if (!existsSync(absolutePath)) {
      await writeFile(
        absolutePath,
        await drawSyntheticFloorPlan(seed * 100_003 + i, i % 5 === 0 ? 'png' : 'jpeg'),
      );
    }
    entries.push({ file, absolutePath, label: 'floor_plan', source: 'synthetic' });
  }
  return entries;
}
