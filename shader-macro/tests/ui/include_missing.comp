#version 450

#include "nowhere.comp"

void main() {}
