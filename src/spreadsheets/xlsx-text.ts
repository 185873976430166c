/**
 * The text of a string item (ECMA-376 Part 1, §18.4: a shared string's `<si>` or an inline string's
 * `<is>`): its `<t>`, or the `<t>` of each rich text run `<r>` joined, leaving out the phonetic runs
 * `<rPh>` (a reading guide above East Asian text, not part of it). Fed the item's elements by the
 * part's parser; elements are matched by local name.
 */
export class StringItemText {
  #text = '';
  #inText = false;
  #phonetic = 0;

  /** Starts a new item. */
  reset(): void {
    this.#text = '';
    this.#inText = false;
    this.#phonetic = 0;
  }

  open(name: string): void {
    if (name === 't') this.#inText = this.#phonetic === 0;
    else if (name === 'rPh') this.#phonetic++;
  }

  close(name: string): void {
    if (name === 't') this.#inText = false;
    else if (name === 'rPh') this.#phonetic--;
  }

  /** Character data (text or CDATA) inside the item. */
  characters(text: string): void {
    if (this.#inText) this.#text += text;
  }

  get text(): string {
    return this.#text;
  }
}
