import { strToU8, Zip, ZipDeflate, ZipPassThrough, zipSync, type Zippable } from 'fflate';

/**
 * XLSX workbooks built here from the format's rules (ECMA-376), laid out as each producer lays its
 * files out: which order the zip holds the parts in, how texts are written (shared, inline, formula
 * strings), whether numbers say `t="n"`, whether the zip has data descriptors. What each producer does,
 * and how that is known, is in docs/spreadsheets.md ("Who writes XLSX, and how"). No third-party file is
 * copied: every byte comes from the parts spelled out below.
 */

/** A cell as a test spells it; null is no `<c>` at all. */
export type FixtureCell =
  | string
  | number
  | boolean
  | null
  | { error: string }
  | { formula: string; text: string }
  | { date: string }
  | { rich: string[]; phonetic?: string }
  | { styledEmpty: true };

export interface FixtureSheet {
  name: string;
  /** Row 1 first; an empty array is a row the file does not hold. */
  rows: FixtureCell[][];
}

/** The roles of a workbook's parts, for choosing the order the zip holds them in. */
export type PartRole =
  | 'contentTypes'
  | 'rootRels'
  | 'workbook'
  | 'workbookRels'
  | 'sheets'
  | 'sharedStrings'
  | 'styles'
  | 'theme'
  | 'docProps';

/** How a producer lays a workbook out. */
export interface Layout {
  order: PartRole[];
  /** How text cells are written: shared strings (`t="s"`), inline (`t="inlineStr"`) or `t="str"`. */
  strings: 'shared' | 'inline' | 'str';
  /** Numbers written `t="n"` (LibreOffice) rather than without a type. */
  numberType?: boolean;
  /** The zip's entries are followed by data descriptors (bit 3), as a streaming zip writer does. */
  dataDescriptors?: boolean;
  /** Directory entries (`xl/`) in the zip, as exceljs writes them. */
  directories?: boolean;
}

/** Each producer's layout, as docs/spreadsheets.md describes it. */
export const PRODUCERS = {
  excel: {
    order: [
      'contentTypes',
      'rootRels',
      'workbook',
      'workbookRels',
      'sheets',
      'theme',
      'styles',
      'sharedStrings',
      'docProps',
    ],
    strings: 'shared',
  },
  libreoffice: {
    order: [
      'rootRels',
      'workbook',
      'styles',
      'sheets',
      'workbookRels',
      'sharedStrings',
      'docProps',
      'contentTypes',
    ],
    strings: 'shared',
    numberType: true,
    dataDescriptors: true,
  },
  googleSheets: {
    order: [
      'workbookRels',
      'workbook',
      'styles',
      'sharedStrings',
      'sheets',
      'contentTypes',
      'rootRels',
      'docProps',
    ],
    strings: 'shared',
  },
  openpyxl: {
    order: [
      'docProps',
      'theme',
      'sheets',
      'sharedStrings',
      'styles',
      'workbook',
      'workbookRels',
      'rootRels',
      'contentTypes',
    ],
    strings: 'shared',
    numberType: true,
  },
  xlsxwriter: {
    order: [
      'contentTypes',
      'rootRels',
      'workbookRels',
      'sheets',
      'workbook',
      'sharedStrings',
      'styles',
      'theme',
      'docProps',
    ],
    strings: 'shared',
  },
  xlsxwriterConstantMemory: {
    order: ['contentTypes', 'rootRels', 'workbookRels', 'sheets', 'workbook', 'styles', 'theme', 'docProps'],
    strings: 'inline',
  },
  exceljs: {
    order: [
      'contentTypes',
      'rootRels',
      'workbookRels',
      'sheets',
      'sharedStrings',
      'theme',
      'styles',
      'docProps',
      'workbook',
    ],
    strings: 'shared',
    directories: true,
  },
  exceljsStream: {
    order: [
      'theme',
      'rootRels',
      'sheets',
      'contentTypes',
      'docProps',
      'sharedStrings',
      'styles',
      'workbookRels',
      'workbook',
    ],
    strings: 'shared',
    dataDescriptors: true,
  },
  exceljsStreamNoSharedStrings: {
    order: ['theme', 'rootRels', 'sheets', 'contentTypes', 'docProps', 'styles', 'workbookRels', 'workbook'],
    strings: 'str',
    dataDescriptors: true,
  },
} satisfies Record<string, Layout>;

export type Producer = keyof typeof PRODUCERS;

/** What else a test may change of the layout. */
export interface BuildOptions {
  /** Each sheet's part file, in tab order (default `sheet1.xml`, `sheet2.xml`, …). */
  sheetFiles?: string[];
  /** Relationship targets written absolute (`/xl/worksheets/sheet1.xml`). */
  absoluteTargets?: boolean;
  /** Elements written with this prefix (`x:row`), the namespace declared for it. */
  prefix?: string;
  /** No `r` on rows and cells. */
  noReferences?: boolean;
  /** Entries stored (method 0) instead of deflated. */
  stored?: boolean;
  /** Part names and relationship targets in another case (`xl/SharedStrings.xml`). */
  sharedStringsName?: string;
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The letters of a 0-based column. */
export function columnLetters(column: number): string {
  let name = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** The parts of a workbook holding `sheets` (in tab order), laid out as `layout` says, in zip order. */
export function workbookParts(
  sheets: FixtureSheet[],
  layout: Layout,
  options: BuildOptions = {},
): Array<[string, string]> {
  const p = options.prefix === undefined ? '' : `${options.prefix}:`;
  const ns = options.prefix === undefined ? `xmlns="${MAIN}"` : `xmlns:${options.prefix}="${MAIN}"`;
  const shared: string[] = [];
  const sharedIndex = new Map<string, number>();
  const shareItem = (key: string, xml: string) => {
    if (!sharedIndex.has(key)) {
      sharedIndex.set(key, shared.length);
      shared.push(xml);
    }
    return sharedIndex.get(key)!;
  };
  const textItem = (text: string) => `<${p}t xml:space="preserve">${escapeXml(text)}</${p}t>`;
  const richItem = (runs: string[], phonetic?: string) =>
    runs
      .map((run, i) => `<${p}r>${i === 0 ? `<${p}rPr><${p}b/></${p}rPr>` : ''}${textItem(run)}</${p}r>`)
      .join('') +
    (phonetic === undefined
      ? ''
      : `<${p}rPh sb="0" eb="1"><${p}t>${escapeXml(phonetic)}</${p}t></${p}rPh><${p}phoneticPr fontId="1"/>`);

  const cellXml = (cell: FixtureCell, ref: string): string => {
    const r = options.noReferences ? '' : ` r="${ref}"`;
    const c = (attributes: string, inner: string) => `<${p}c${r}${attributes}>${inner}</${p}c>`;
    const v = (text: string) => `<${p}v>${text}</${p}v>`;
    if (cell === null) return '';
    if (typeof cell === 'number') return c(layout.numberType ? ' t="n"' : '', v(String(cell)));
    if (typeof cell === 'boolean') return c(' t="b"', v(cell ? '1' : '0'));
    if (typeof cell === 'string' || 'rich' in cell) {
      const item = typeof cell === 'string' ? textItem(cell) : richItem(cell.rich, cell.phonetic);
      switch (layout.strings) {
        case 'shared':
          return c(' t="s"', v(String(shareItem(item, item))));
        case 'inline':
          return c(' t="inlineStr"', `<${p}is>${item}</${p}is>`);
        case 'str':
          return c(' t="str"', v(escapeXml(typeof cell === 'string' ? cell : cell.rich.join(''))));
      }
    }
    if ('error' in cell) return c(' t="e"', `<${p}f>1/0</${p}f>${v(escapeXml(cell.error))}`);
    if ('formula' in cell)
      return c(' t="str"', `<${p}f>${escapeXml(cell.formula)}</${p}f>${v(escapeXml(cell.text))}`);
    if ('date' in cell) return c(' t="d"', v(cell.date));
    return `<${p}c${r} s="1"/>`;
  };

  const sheetXml = (sheet: FixtureSheet) => {
    const rows = sheet.rows
      .map((cells, index) => {
        if (cells.length === 0) return '';
        const r = options.noReferences ? '' : ` r="${index + 1}"`;
        return `<${p}row${r}>${cells.map((cell, column) => cellXml(cell, `${columnLetters(column)}${index + 1}`)).join('')}</${p}row>`;
      })
      .join('');
    return `${HEAD}<${p}worksheet ${ns} xmlns:r="${RELS}"><${p}dimension ref="A1"/><${p}sheetData>${rows}</${p}sheetData><${p}pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></${p}worksheet>`;
  };

  const sheetFiles = options.sheetFiles ?? sheets.map((_, i) => `sheet${i + 1}.xml`);
  const sheetParts = sheets.map(
    (sheet, i) => [`xl/worksheets/${sheetFiles[i]}`, sheetXml(sheet)] as [string, string],
  );
  const sharedName = options.sharedStringsName ?? 'sharedStrings.xml';
  const target = (path: string) => (options.absoluteTargets ? `/xl/${path}` : path);
  // Relationship ids not in tab order, as a workbook whose sheets were reordered has them.
  const sheetIds = sheets.map((_, i) => `rId${sheets.length - i + 3}`);
  const workbookRels =
    `${HEAD}<Relationships xmlns="${PKG_RELS}">` +
    `<Relationship Id="rId1" Type="${RELS}/styles" Target="${target('styles.xml')}"/>` +
    `<Relationship Id="rId2" Type="${RELS}/theme" Target="${target('theme/theme1.xml')}"/>` +
    (layout.strings === 'shared'
      ? `<Relationship Id="rId3" Type="${RELS}/sharedStrings" Target="${target(sharedName)}"/>`
      : '') +
    sheets
      .map(
        (_, i) =>
          `<Relationship Id="${sheetIds[i]}" Type="${RELS}/worksheet" Target="${target(`worksheets/${sheetFiles[i]}`)}"/>`,
      )
      .join('') +
    '</Relationships>';
  const workbook =
    `${HEAD}<${p}workbook ${ns} xmlns:r="${RELS}"><${p}bookViews><${p}workbookView activeTab="0"/></${p}bookViews><${p}sheets>` +
    sheets
      .map(
        (sheet, i) => `<${p}sheet name="${escapeXml(sheet.name)}" sheetId="${i + 1}" r:id="${sheetIds[i]}"/>`,
      )
      .join('') +
    `</${p}sheets></${p}workbook>`;
  const sheetsXml = sheetParts.map(([name]) => name);
  const roles: Record<PartRole, Array<[string, string]>> = {
    contentTypes: [
      [
        '[Content_Types].xml',
        `${HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${sheetsXml.map((name) => `<Override PartName="/${name}" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('')}</Types>`,
      ],
    ],
    rootRels: [
      [
        '_rels/.rels',
        `${HEAD}<Relationships xmlns="${PKG_RELS}"><Relationship Id="rId2" Type="${PKG_RELS}/metadata/core-properties" Target="docProps/core.xml"/><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="${options.absoluteTargets ? '/xl/workbook.xml' : 'xl/workbook.xml'}"/></Relationships>`,
      ],
    ],
    workbook: [['xl/workbook.xml', workbook]],
    workbookRels: [['xl/_rels/workbook.xml.rels', workbookRels]],
    sheets: sheetParts,
    sharedStrings: [],
    styles: [
      [
        'xl/styles.xml',
        `${HEAD}<styleSheet xmlns="${MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="49"/></cellXfs></styleSheet>`,
      ],
    ],
    theme: [
      [
        'xl/theme/theme1.xml',
        `${HEAD}<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Office Theme"/>`,
      ],
    ],
    docProps: [
      [
        'docProps/core.xml',
        `${HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>fixture</dc:creator></cp:coreProperties>`,
      ],
    ],
  };
  // The sheets are written first: that is when the shared strings are known.
  if (layout.strings === 'shared') {
    roles.sharedStrings.push([
      `xl/${sharedName}`,
      `${HEAD}<${p}sst ${ns} count="${shared.length}" uniqueCount="${shared.length}">${shared.map((item) => `<${p}si>${item}</${p}si>`).join('')}</${p}sst>`,
    ]);
  }
  return layout.order.flatMap((role) => roles[role]);
}

/** A zip of `parts` in their order, by fflate: `zipSync` (sizes in the local headers), or its streaming `Zip` (data descriptors). */
export function zipParts(
  parts: Array<[string, string | Uint8Array]>,
  {
    stored = false,
    dataDescriptors = false,
    directories = false,
  }: { stored?: boolean; dataDescriptors?: boolean; directories?: boolean } = {},
): Uint8Array {
  const bytesOf = (data: string | Uint8Array) => (typeof data === 'string' ? strToU8(data) : data);
  const level = stored ? 0 : 6;
  const mtime = new Date('2026-01-02T03:04:05Z');
  if (!dataDescriptors) {
    const files: Zippable = {};
    const seen = new Set<string>();
    for (const [name, data] of parts) {
      if (directories) {
        const dirs = name.split('/').slice(0, -1);
        for (let i = 1; i <= dirs.length; i++) {
          const dir = `${dirs.slice(0, i).join('/')}/`;
          if (!seen.has(dir)) files[dir] = [new Uint8Array(0), { level: 0, mtime }];
          seen.add(dir);
        }
      }
      files[name] = [bytesOf(data), { level, mtime }];
    }
    return zipSync(files);
  }
  const chunks: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    chunks.push(chunk);
  });
  for (const [name, data] of parts) {
    const file = stored ? new ZipPassThrough(name) : new ZipDeflate(name, { level });
    file.mtime = mtime;
    zip.add(file);
    file.push(bytesOf(data), true);
  }
  zip.end();
  const out = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** A workbook as `producer` lays it out (with `options`), its sheets in tab order. */
export function buildXlsx(
  sheets: FixtureSheet[],
  producer: Producer | Layout,
  options: BuildOptions = {},
): Uint8Array {
  const layout: Layout = typeof producer === 'string' ? PRODUCERS[producer] : producer;
  return zipParts(workbookParts(sheets, layout, options), {
    stored: options.stored,
    dataDescriptors: layout.dataDescriptors,
    directories: layout.directories,
  });
}

/**
 * `zip` (as `zipSync` writes it: no data descriptors) with `extra` added to every local header's extra
 * field only, as Info-ZIP writes a longer extended timestamp locally than in the central directory:
 * a reader must find the data by the local header's own lengths (APPNOTE 4.3.7). Offsets are moved.
 */
export function withLocalExtra(zip: Uint8Array, extra: Uint8Array): Uint8Array {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const pieces: Uint8Array[] = [];
  const moved = new Map<number, number>();
  let at = 0;
  while (view.getUint32(at, true) === 0x04034b50) {
    const nameLength = view.getUint16(at + 26, true);
    const extraLength = view.getUint16(at + 28, true);
    const size = view.getUint32(at + 18, true);
    moved.set(at, at + extra.length * moved.size);
    const header = zip.slice(at, at + 30 + nameLength + extraLength);
    new DataView(header.buffer).setUint16(28, extraLength + extra.length, true);
    pieces.push(
      header,
      extra,
      zip.subarray(at + 30 + nameLength + extraLength, at + 30 + nameLength + extraLength + size),
    );
    at += 30 + nameLength + extraLength + size;
  }
  const shift = extra.length * moved.size;
  const directory = zip.slice(at);
  const dview = new DataView(directory.buffer);
  let d = 0;
  while (dview.getUint32(d, true) === 0x02014b50) {
    dview.setUint32(d + 42, moved.get(dview.getUint32(d + 42, true))!, true);
    d += 46 + dview.getUint16(d + 28, true) + dview.getUint16(d + 30, true) + dview.getUint16(d + 32, true);
  }
  dview.setUint32(d + 16, dview.getUint32(d + 16, true) + shift, true);
  pieces.push(directory);
  const out = new Uint8Array(pieces.reduce((n, piece) => n + piece.length, 0));
  let o = 0;
  for (const piece of pieces) {
    out.set(piece, o);
    o += piece.length;
  }
  return out;
}
