  return value;
  return value;
}
export function run() {
export function run() {
}
const value = 88;
export function run() {
  return value;
export function run() {
export function run() {
  return value;

export function run() {
  return value;
  return value;

const value = 45;
export function run() {
  return value;
export function run() {
}


  return value;

}
  return value;
export function run() {
}
}
}
export function run() {
const value = 41;

