import type { ZipDirectory, ZipEntry } from './zip-directory.ts';
import { localName, parseXmlPart, xmlParser } from './xlsx-xml.ts';
import { XlsxReadError } from './xlsx-read-error.ts';

/**
 * Where a workbook keeps what the import reads (docs/spreadsheets.md, "The XLSX reader"), found the
 * way the format says rather than by the usual names: the package's relationships (`_rels/.rels`)
 * name the workbook part; the workbook lists its sheets in tab order (`<sheets>`), each by a
 * relationship id; the workbook's relationships give each sheet's part and the shared strings part.
 * So the first tab is read also when it is `sheet2.xml`, and a part elsewhere than `xl/` is found.
 */

/** The parts the import reads: the first tab's worksheet, and the shared strings when there are any. */
export interface WorkbookParts {
  /** The first sheet's name, as its tab shows it. */
  sheetName: string;
  sheet: ZipEntry;
  sharedStrings: ZipEntry | null;
}

interface Relationship {
  id: string;
  /** The type's last segment (`worksheet`): transitional and strict OOXML differ only before it. */
  kind: string;
  /** The target's part name, resolved (`/xl/worksheets/sheet1.xml`). */
  part: string;
}

/** The relationships part of `part` (ECMA-376 Part 2, §9.3.1): `/xl/workbook.xml` → `xl/_rels/workbook.xml.rels`. */
function relationshipsPartOf(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${part.slice(1, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/**
 * A relationship's target as a part name: absolute (`/xl/worksheets/sheet2.xml`) as it is, relative
 * (`worksheets/sheet2.xml`, `../xl/workbook.xml`) against the folder of the part that holds it
 * (§9.3.2, RFC 3986's resolution), percent-escapes undone.
 */
export function resolveTarget(sourcePart: string, target: string): string {
  const base = target.startsWith('/') ? [] : sourcePart.split('/').slice(1, -1);
  const segments = [...base];
  for (const segment of target.split(/[?#]/)[0]!.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const decoded = segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
  return `/${decoded.join('/')}`;
}

/** The relationships of `part` (`/` for the package's own); none when it has no relationships part. */
async function relationshipsOf(zip: ZipDirectory, part: string): Promise<Relationship[]> {
  const name = part === '/' ? '_rels/.rels' : relationshipsPartOf(part);
  const entry = zip.find(name);
  if (entry === undefined) return [];
  const relationships: Relationship[] = [];
  const parser = xmlParser(entry.name);
  parser.on('opentag', (tag) => {
    if (localName(tag.name) !== 'Relationship') return;
    const { Id: id, Type: type, Target: target, TargetMode: mode } = tag.attributes;
    if (id === undefined || type === undefined || target === undefined || mode === 'External') return;
    relationships.push({
      id,
      kind: type.slice(type.lastIndexOf('/') + 1),
      part: resolveTarget(part, target),
    });
  });
  await parseXmlPart(zip, entry, parser);
  return relationships;
}

/** The workbook's root element and its first `<sheet>`: name and relationship id. */
async function firstSheetOf(
  zip: ZipDirectory,
  entry: ZipEntry,
): Promise<{ root: string; first: { name: string; id: string | undefined } | null }> {
  let root = '';
  let first: { name: string; id: string | undefined } | null = null;
  const parser = xmlParser(entry.name);
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (root === '') root = name;
    if (name !== 'sheet' || first !== null) return;
    // The id is `r:id`, in the relationships namespace under whatever prefix the producer chose.
    const idAttribute = Object.keys(tag.attributes).find(
      (key) => key.includes(':') && localName(key) === 'id',
    );
    first = { name: tag.attributes.name ?? '', id: idAttribute && tag.attributes[idAttribute] };
  });
  await parseXmlPart(zip, entry, parser);
  return { root, first };
}

/** Finds the first tab's worksheet and the shared strings; throws `XlsxReadError` when the file has no workbook. */
export async function findWorkbookParts(zip: ZipDirectory): Promise<WorkbookParts> {
  const office = (await relationshipsOf(zip, '/')).find((r) => r.kind === 'officeDocument');
  const workbookPart = office?.part ?? '/xl/workbook.xml';
  const workbook = zip.find(workbookPart);
  if (workbook === undefined) throw new XlsxReadError(`it has no workbook part (${workbookPart.slice(1)})`);
  const { root, first } = await firstSheetOf(zip, workbook);
  if (root !== 'workbook')
    throw new XlsxReadError(`its main part is a <${root}>, not a spreadsheet's <workbook>`);
  if (first === null) throw new XlsxReadError('its workbook lists no sheet');
  const relationships = await relationshipsOf(zip, workbookPart);
  const target = relationships.find((r) => r.id === first.id);
  if (target === undefined) {
    throw new XlsxReadError(
      `the workbook's relationships do not say where its first sheet, "${first.name}", is`,
    );
  }
  if (target.kind !== 'worksheet') {
    throw new XlsxReadError(
      `its first sheet, "${first.name}", is a ${target.kind}, not a worksheet of cells`,
    );
  }
  const sheet = zip.find(target.part);
  if (sheet === undefined)
    throw new XlsxReadError(`its first sheet's part ${target.part.slice(1)} is missing`);
  const sharedPart = relationships.find((r) => r.kind === 'sharedStrings')?.part;
  return { sheetName: first.name, sheet, sharedStrings: (sharedPart && zip.find(sharedPart)) || null };
}
