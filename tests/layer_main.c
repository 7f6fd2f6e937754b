/* tests/layer_main.c — the program of the layer link checks (meson.build): it does
 * nothing; linking every object of one layer against the layers below it is the check. */
int main(void) { return 0; }
