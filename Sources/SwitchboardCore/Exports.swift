// Core speaks the reference's vocabulary: every target that imports Core sees it too.
@_exported import SwitchboardReference
