/** What a route passes its view: the path's one parameter and the hash's query. */
export interface RouteParams {
  id: string;
  query: URLSearchParams;
}

/** A view draws itself into `main` and returns what stops its timers when the page changes. */
export type View = (main: HTMLElement, params: RouteParams) => (() => void) | void;
