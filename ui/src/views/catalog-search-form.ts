import type { SearchQueryProperties } from '../../../src/catalog/catalog-search.schemas.ts';
import {
  FURNITURE_COLORS,
  FURNITURE_STYLES,
  FURNITURE_SUB_TYPES,
  FURNITURE_TYPES,
} from '../../../src/catalog/enums.ts';
import { h } from '../dom.ts';

/** The query parameters of a catalog search (docs/reference.md §11.7), named by the route's own schema. */
export type SearchParam = keyof typeof SearchQueryProperties;

/** What the form asks for: each parameter's text, '' when not given. */
export type SearchCriteria = Record<SearchParam, string>;

/** How a parameter is asked for: a text field, or a select of its enumeration's values. */
interface Field {
  label: string;
  /** The enumeration, from the service's own lists (src/catalog/enums.ts). */
  options?: readonly string[];
  /** The select's first option, which sends nothing. */
  any?: string;
  placeholder?: string;
  /** A line under the field saying what it does; read out with it (`aria-describedby`). */
  help?: string;
}

/** Every search parameter, in the form's order; a `Record`, so a parameter the route gains fails the type check here. */
const FIELDS: Record<SearchParam, Field> = {
  q: {
    label: 'Search',
    placeholder: 'Name, external id, brand or SKU',
    // `q` matches those four fields only (docs/search.md): "sofa" finds a sofa by its name, and
    // every sofa only through the Type filter.
    help: 'Searches names, external ids, brands and SKUs, not descriptions. For a kind of furniture, choose a Type or Sub-type below.',
  },
  type: { label: 'Type', options: FURNITURE_TYPES, any: 'Any type' },
  style: { label: 'Style', options: FURNITURE_STYLES, any: 'Any style' },
  sub_type: { label: 'Sub-type', options: FURNITURE_SUB_TYPES, any: 'Any sub-type' },
  color: { label: 'Colour', options: FURNITURE_COLORS, any: 'Any colour' },
  min_price: { label: 'Min price' },
  max_price: { label: 'Max price' },
};

const PARAMS = Object.keys(FIELDS) as SearchParam[];

/** The catalog's search form and what it currently asks for. */
export interface SearchForm {
  element: HTMLFormElement;
  criteria(): SearchCriteria;
}

/**
 * The search form, filled from `initial` (the address's query). Typing in a text field calls
 * `onTyping` (the view waits for a pause); choosing in a select, Enter and "Clear" call `onChange`.
 * Prices are text fields, not `type=number`: a browser empties a number field holding `abc`, and the
 * service's 400 naming the parameter is the better answer to show.
 */
export function searchForm(
  initial: URLSearchParams,
  { onTyping, onChange }: { onTyping: () => void; onChange: () => void },
): SearchForm {
  const controls = new Map<SearchParam, HTMLInputElement | HTMLSelectElement>();
  const cells = PARAMS.map((param) => {
    const field = FIELDS[param];
    const id = `search-${param}`;
    const value = initial.get(param) ?? '';
    const control = field.options
      ? h(
          'select',
          { id, name: param, onchange: onChange },
          h('option', { value: '' }, field.any ?? ''),
          field.options.map((option) => h('option', { value: option }, option)),
        )
      : h('input', {
          id,
          name: param,
          type: param === 'q' ? 'search' : 'text',
          inputmode: param === 'q' ? null : 'decimal',
          autocomplete: 'off',
          placeholder: field.placeholder ?? null,
          'aria-describedby': field.help ? `${id}-help` : null,
          oninput: onTyping,
        });
    control.value = value;
    controls.set(param, control);
    return h(
      'div',
      { class: `search-field search-${param}` },
      h('label', { for: id }, field.label),
      control,
      field.help ? h('p', { id: `${id}-help`, class: 'help' }, field.help) : null,
    );
  });
  const criteria = () =>
    Object.fromEntries(PARAMS.map((param) => [param, controls.get(param)!.value.trim()])) as SearchCriteria;
  const element = h(
    'form',
    {
      class: 'search-form',
      role: 'search',
      'aria-label': 'Search the catalog',
      onsubmit: (event) => {
        event.preventDefault();
        onChange();
      },
    },
    cells,
    h(
      'div',
      { class: 'search-buttons' },
      h('button', { type: 'submit', class: 'primary' }, 'Search'),
      h(
        'button',
        {
          type: 'button',
          onclick: () => {
            for (const control of controls.values()) control.value = '';
            onChange();
          },
        },
        'Clear',
      ),
    ),
  );
  return { element, criteria };
}
