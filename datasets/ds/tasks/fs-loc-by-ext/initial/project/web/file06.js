
  return value;
  return value;
}
const value = 51;
export function run() {
}

const value = 24;
export function run() {
const value = 51;
export function run() {
  return value;
export function run() {
const value = 27;

export function run() {
export function run() {
export function run() {
  return value;

const value = 57;
}
const value = 89;
export function run() {
}
export function run() {
  return value;
}
export function run() {
export function run() {
}
export function run() {
  return value;
const value = 68;

}
}
  return value;
const value = 20;
export function run() {
const value = 21;
const value = 22;
}
const value = 1;
const value = 74;
}
  return value;
}

  return value;
export function run() {
const value = 23;
export function run() {

}
const value = 48;
const value = 55;
const value = 31;
  return value;

  return value;


  return value;

export function run() {
}


const value = 17;


