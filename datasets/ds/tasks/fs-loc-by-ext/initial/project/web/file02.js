  return value;
  return value;
  return value;
const value = 24;
const value = 21;
const value = 20;
}
export function run() {

const value = 49;
  return value;
}
}

const value = 53;


const value = 58;
  return value;
const value = 75;
const value = 59;
}
const value = 86;
}

const value = 1;
export function run() {

  return value;

}
export function run() {
export function run() {

export function run() {
const value = 25;
}
export function run() {
export function run() {

}
const value = 88;

  return value;
  return value;
const value = 6;
const value = 22;
}
const value = 16;
}
const value = 48;
  return value;

const value = 71;
const value = 79;
