// The daemon's HTTP API as the console calls it: this origin only, JSON both ways, the
// bearer token (when the daemon wants one) kept in this tab's session storage and asked
// for when a request is refused. Errors are the API's one-line {"error": ...} messages.

const TOKEN_KEY = "statlas.api-token";
let askForToken = null;
let pendingAsk = null;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function whenTokenWanted(ask) {
  askForToken = ask;
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

export async function call(path, {method = "GET", body = undefined, params = []} = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of params) url.searchParams.append(name, value);
  for (;;) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    const headers = {Accept: "application/json"};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (response.status === 401 && askForToken) {
      const given = await oneAsk(token ? "The daemon refused that token: enter it again." : null);
      if (given) {
        sessionStorage.setItem(TOKEN_KEY, given);
        continue;
      }
    }
    if (!response.ok) {
      const message = data && typeof data.error === "string" ? data.error
        : `${response.status} ${response.statusText}`;
      throw new ApiError(response.status, message);
    }
    return data;
  }
}

function oneAsk(why) {
  // several requests refused at once share one question
  if (!pendingAsk) pendingAsk = askForToken(why).finally(() => { pendingAsk = null; });
  return pendingAsk;
}
