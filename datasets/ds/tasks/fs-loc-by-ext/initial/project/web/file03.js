
  return value;
  return value;


}
  return value;
const value = 66;
}
}
}
export function run() {


export function run() {
}
  return value;
}
const value = 25;
const value = 65;
export function run() {
}
  return value;
const value = 14;
}
}

  return value;
  return value;


const value = 11;
  return value;
const value = 72;
const value = 70;
export function run() {
  return value;

  return value;

  return value;
  return value;
  return value;
const value = 94;

const value = 47;
export function run() {
export function run() {
export function run() {
const value = 27;

}

const value = 47;
export function run() {
export function run() {
export function run() {
export function run() {
export function run() {
const value = 60;

  return value;
  return value;
export function run() {
