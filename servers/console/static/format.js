// How figures are written on the page: counts with thousands separators, bytes in binary
// units, times in UTC as the API gives them, estimates to three significant digits.

const integers = new Intl.NumberFormat("en-US", {maximumFractionDigits: 0});
const decimals = new Intl.NumberFormat("en-US", {maximumFractionDigits: 2});

export function count(value) {
  return value === null || value === undefined ? "–" : integers.format(value);
}

export function number(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value !== "number") return String(value);
  return Number.isInteger(value) ? integers.format(value) : decimals.format(value);
}

export function bytes(value) {
  if (value === null || value === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let scaled = value;
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? scaled : scaled.toFixed(1)} ${units[unit]}`;
}

export function time(text) {
  return text ? text.replace("T", " ").replace(/Z$/, " UTC") : "–";
}

export function since(text, now = Date.now()) {
  if (!text) return "never";
  const seconds = Math.max(0, (now - Date.parse(text)) / 1000);
  if (seconds < 90) return `${Math.round(seconds)} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}

export function duration(start, end) {
  if (!start || !end) return "–";
  const seconds = (Date.parse(end) - Date.parse(start)) / 1000;
  return seconds < 120 ? `${seconds.toFixed(0)} s` : `${(seconds / 60).toFixed(1)} min`;
}

export function value(v) {
  if (v === null || v === undefined) return "null";
  return typeof v === "number" ? number(v) : String(v);
}

export function rows(value) {
  if (value === null || value === undefined) return "–";
  return value >= 1e6 ? value.toExponential(2) : number(Math.round(value * 10) / 10);
}
